"""CUPID prompts: response generation and preference inference exactly as the official code
(github.com/kixlab/CUPID @ a8560cab, prompts/evaluation/*.yaml, with the interaction log of
utils/formatting.py), summary memory as the paper's Fig. 23 (no code published), and
:func:`inferred_preference`, the official extraction of the inferred line from a reply.

The per-session summary call of the *summaries* context configuration, with the same Fig. 23
prompt, is generic: :mod:`core.methods.session_summary`.
"""

from __future__ import annotations

from core.benchmarks.cupid.render import cupid_log
from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import question_text
from core.model import Query
from core.plan import Message, PromptPlan

F = "cupid"


def _pair(system: str, user: str) -> list[Message]:
    return [Message(role="system", content=system), Message(role="user", content=user)]


#: CUPID's bundled model call (evaluation/models/gpt_41_nano.py): plans carry no parameters.
PARAMS_NOTE = "CUPID's example model runs at temperature 0, max_tokens 8192 and strips the reply"


def generation(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    user = prompts.text(F, "generate_user", interaction_log=cupid_log(ctx), curr_request=question_text(query))
    msgs = _pair(prompts.text(F, "generate_system"), user)
    step = make_step("answer", msgs, "CUPID repo response_generator.yaml: interaction log + request", opts.encoding)
    return make_plan("cupid-generate", [step], ctx, query, notes=[PARAMS_NOTE])


def inference(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    user = prompts.text(F, "infer_user", interaction_log=cupid_log(ctx), curr_request=query.text)
    msgs = _pair(prompts.text(F, "infer_system"), user)
    notes = [PARAMS_NOTE, "the judge reads the line after '### Most Likely Preference' (CUPID process_output)"]
    step = make_step("infer", msgs, "CUPID repo preference_inferrer.yaml: the most likely preference", opts.encoding)
    return make_plan("cupid-infer", [step], ctx, query, notes=notes, answer_format_override="preference")


def summary_memory(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    first = _pair(
        prompts.text(F, "summarise_system"), prompts.text(F, "summarise_user", interaction_log=cupid_log(ctx))
    )
    second = _pair(
        prompts.text(F, "generate_system"),
        prompts.text(F, "generate_user", interaction_log="{{output:summaries}}", curr_request=question_text(query)),
    )
    steps = [
        make_step("summaries", first, "Fig. 23: summarise every session (context + preferences)", opts.encoding),
        make_step("answer", second, "generator prompt with the summaries in place of the log", opts.encoding),
    ]
    notes = ["summary memory follows the paper (Fig. 23): the CUPID repo has no code for it"]
    return make_plan("summary-memory", steps, ctx, query, notes=notes)


#: The heading CUPID's inferrer answers under (preference_inferrer.yaml).
PREFERENCE_HEADING = "### Most Likely Preference"


class NoPreferenceHeading(ValueError):
    """The reply lacks ``### Most Likely Preference``: CUPID's extraction raises and the instance is
    left out of the averages."""


def inferred_preference(reply: str) -> str:
    """The inferred preference exactly as CUPID's ``PreferenceInferrer.process_output`` takes it:
    the text after the first heading (up to a second one), stripped, first line, stripped. No case
    folding and no other heading, so ``### Most Likely Preferences`` yields ``"s"``; an empty
    result is the *empty inference* (counted as zero)."""
    parts = reply.split(PREFERENCE_HEADING)
    if len(parts) < 2:
        raise NoPreferenceHeading(f"no {PREFERENCE_HEADING!r} heading in the reply")
    return parts[1].strip().split("\n")[0].strip()
