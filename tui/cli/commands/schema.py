"""`prefscope schema`: the JSON Schema of the native bundle format (or of a filler pool file)."""

from __future__ import annotations

import json

import click

from tui.cli.command_info import CommandInfo

COMMAND = CommandInfo(
    name="schema",
    help="Print the JSON Schema of the native bundle format.",
    examples=("prefscope schema > user.schema.json", "prefscope schema --filler"),
    writes=False,
    order=80,
)


@click.command()
@click.option("--filler", is_flag=True, help="The filler-pool file format instead of the user bundle.")
def schema(filler: bool) -> None:
    """Print the JSON Schema of the native bundle format (prefscope.user, version 1)."""
    from core.formats import native
    from core.model import FillerPool, UserBundle

    model, tag = (FillerPool, native.FILLER_TAG) if filler else (UserBundle, native.USER_TAG)
    body = model.model_json_schema()
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"{tag} v{native.VERSION}",
        "description": body.get("description", ""),
        "type": "object",
        "properties": {
            "format": {"const": tag, "type": "string"},
            "version": {"const": native.VERSION, "type": "integer"},
            **body.get("properties", {}),
        },
        "required": ["format", "version", *body.get("required", [])],
        "additionalProperties": False,
    }
    if "$defs" in body:
        doc["$defs"] = body["$defs"]
    click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
