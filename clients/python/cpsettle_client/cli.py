"""``cpsettle``: settle, validate and evaluate hands, and read profiles, from the command line.

JSON in (the JSON form of the request messages), a readable table or JSON out. ``--local``
runs the engine in this process with no server; otherwise ``--server HOST:PORT`` (default
``$CPSETTLE_SERVER`` or ``localhost:50051``). Errors print as a list of violations and exit
non-zero, without a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import Message

from cpsettle.v1 import settlement_pb2 as pb

from . import render
from .backend import (  # the exit codes and CliError are part of this module's interface too
    EXIT_INVALID,
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    Backend,
    CliError,
    parse_message,
    read_json,
)
from .backend import read_bytes as _read_bytes
from .client import FieldViolation, message_dict
from .escape import json_text, shown
from .i18n import Language, LanguageProblem, from_environment

__all__ = [
    "EXIT_INVALID",
    "EXIT_MISMATCH",
    "EXIT_OK",
    "EXIT_UNAVAILABLE",
    "Backend",
    "CliError",
    "build_parser",
    "cmd_evaluate",
    "cmd_profiles",
    "cmd_replay",
    "cmd_settle",
    "cmd_validate",
    "entry",
    "language",
    "main",
    "print_error",
    "to_json",
    "version_text",
]


def to_json(message: Message) -> str:
    return json_text(message_dict(message))


# --------------------------------------------------------------------------- commands


def language(args: argparse.Namespace) -> Language:
    """The language of the table output: ``--lang``, else the environment's
    (``i18n.from_environment``: $CPSETTLE_LANG, LANGUAGE, LC_ALL, LC_MESSAGES, LANG), else
    English. A language without a catalog is a usage error (exit 2)."""
    try:
        return Language.get(args.lang) if args.lang else from_environment()
    except LanguageProblem as e:
        raise CliError(str(e)) from None


def cmd_settle(args: argparse.Namespace) -> int:
    data = read_json(args.file)
    request = parse_message(data, pb.SettleRequest(), args.file)
    lang = language(args)  # a bad --lang is refused before the hand is settled
    with Backend(args) as backend:
        response = backend.call(lambda s: s.settle(request), lambda c: c.settle(request))
    if args.output == "html":
        from .views import hand_page
        from .views.hand import page_language

        print(
            hand_page(
                json_format.MessageToDict(response),
                request=data,
                request_name=Path(args.file).name if args.file != "-" else "stdin",
                lang=page_language(args.lang),
            ),
            end="",
        )
    else:
        print(
            to_json(response)
            if args.output == "json"
            else render.settlement(response.settlement, lang)
        )
    return EXIT_OK


def _amounts(items: Sequence[str], what: str) -> dict[str, int]:
    out: dict[str, int] = {}
    problems = []
    for item in items:
        name, sep, amount = item.rpartition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name] = int(amount)
        except ValueError:
            problems.append(FieldViolation(what, f"{item!r} is not PLAYER=AMOUNT (minor units)"))
    if problems:
        raise CliError("bad --proposed values", problems)
    return out


def cmd_validate(args: argparse.Namespace) -> int:
    data = read_json(args.file)
    if isinstance(data, dict) and "request" in data:
        message = parse_message(data, pb.ValidatePayoutsRequest(), args.file)
    else:
        message = pb.ValidatePayoutsRequest(
            request=parse_message(data, pb.SettleRequest(), args.file)
        )
    for pid, amount in _amounts(args.proposed or [], "--proposed").items():
        message.proposed.add(player_id=pid, net_money=amount)
    lang = language(args)
    with Backend(args) as backend:
        response = backend.call(
            lambda s: s.validate_payouts(message),
            lambda c: c._call(c._stub.ValidatePayouts, message, None),
        )
    print(to_json(response) if args.output == "json" else render.payouts(response, lang))
    return EXIT_OK if response.all_match else EXIT_MISMATCH


def cmd_evaluate(args: argparse.Namespace) -> int:
    if args.file:
        message = parse_message(read_json(args.file), pb.EvaluateArrangementRequest(), args.file)
    else:
        message = pb.EvaluateArrangementRequest(preset=args.preset or "")
        if args.cards:
            message.cards.extend(args.cards.split())
        else:
            if not (args.front and args.middle and args.back):
                raise CliError("give FILE, or --front/--middle/--back, or --cards")
            message.arrangement.front.extend(args.front.split())
            message.arrangement.middle.extend(args.middle.split())
            message.arrangement.back.extend(args.back.split())
        message.in_fantasyland = bool(args.in_fantasyland)
    lang = language(args)
    with Backend(args) as backend:
        response = backend.call(lambda s: s.evaluate(message), lambda c: c.evaluate(message))
    print(to_json(response) if args.output == "json" else render.evaluation(response, lang))
    return EXIT_OK


def cmd_profiles(args: argparse.Namespace) -> int:
    lang = language(args)
    with Backend(args) as backend:
        if args.name:
            response = backend.call(
                lambda s: s.get_profile(args.name), lambda c: c.get_profile(args.name)
            )
            if args.output == "json":
                print(render.profile_json(response.profile))
            else:
                print(render.profile(response))
        else:
            listing = backend.call(lambda s: s.list_profiles(), lambda c: c.list_profiles())
            print(to_json(listing) if args.output == "json" else render.profiles(listing, lang))
    return EXIT_OK


def cmd_replay(args: argparse.Namespace) -> int:
    from .proof import ProofError, differences, load_settlement, settlement_dict

    request = parse_message(read_json(args.request), pb.SettleRequest(), args.request)
    try:
        stored = load_settlement(_read_bytes(args.settlement))
    except ProofError as e:
        raise CliError(f"{args.settlement}: {e}") from None
    with Backend(args) as backend:
        response = backend.call(lambda s: s.settle(request), lambda c: c.settle(request))
    diffs = differences(settlement_dict(stored), settlement_dict(response.settlement))
    if args.output == "json":
        print(json_text({"identical": not diffs, "differences": diffs}))
    elif diffs:
        print(f"Replay differs from {args.settlement} in {len(diffs)} place(s):")
        for d in diffs:
            print(f"  - {d}")
    else:
        print(
            f"Replay identical to {args.settlement} (settlement {stored.settlement_id}); "
            "only issuedAt and signature may differ."
        )
    return EXIT_MISMATCH if diffs else EXIT_OK


# --------------------------------------------------------------------------- parser


def _connection(p: argparse.ArgumentParser, local: bool = True) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--server",
        default=os.environ.get("CPSETTLE_SERVER", "localhost:50051"),
        help="HOST:PORT of the service (default $CPSETTLE_SERVER or localhost:50051)",
    )
    if local:
        where.add_argument(
            "--local", action="store_true", help="run the engine in this process, no server"
        )
        p.add_argument("--profile-dir", help="with --local: also load house profiles from here")
        p.add_argument(
            "--signing-key-file",
            help="with --local: sign with this Ed25519 key "
            "(PEM; key id from $CPSETTLE_SIGNING_KEY_ID, default its fingerprint)",
        )
    p.add_argument("--timeout", type=float, default=10.0, help="deadline per call in seconds")
    p.add_argument("--tls", action="store_true", help="use TLS (system roots unless --ca-file)")
    p.add_argument("--ca-file", help="CA certificate to trust (PEM)")
    p.add_argument("--cert-file", help="client certificate for mutual TLS (PEM)")
    p.add_argument("--key-file", help="client key for mutual TLS (PEM)")
    p.add_argument("--server-name", help="expected name in the server certificate")
    p.add_argument("--token", help="bearer token (default $CPSETTLE_TOKEN)")


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", choices=("table", "json"), default="table")
    _lang(p)


def _lang(p: argparse.ArgumentParser) -> None:
    from .views.hand import add_lang_option

    add_lang_option(
        p,
        "the language of the table output (default: $CPSETTLE_LANG, else the "
        "locale's: LANGUAGE, LC_ALL, LC_MESSAGES, LANG; else English); with "
        "--output html, the language the page opens in",
    )


def version_text() -> str:
    """What ``cpsettle --version`` prints: the package, the engine it settles with and the
    contract it speaks (the proto package, and a digest of its compiled descriptors, which
    changes with any change to the .proto files)."""
    import hashlib

    from cpsettle.v1 import profile_pb2
    from cpsettle_service.proof.integrity import ENGINE_VERSION, PACKAGE_VERSION

    contract = hashlib.sha256(
        pb.DESCRIPTOR.serialized_pb + profile_pb2.DESCRIPTOR.serialized_pb
    ).hexdigest()[:16]
    return (
        f"cpsettle {PACKAGE_VERSION}\n"
        f"engine {ENGINE_VERSION}\n"
        f"contract {pb.DESCRIPTOR.package} (descriptors {contract})"
    )


class _Version(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(
            option_strings,
            dest,
            nargs=0,
            help="print the package, engine and contract versions and exit",
        )

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cpsettle", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("settle", help="settle a hand (a SettleRequest JSON file)")
    p.add_argument("file", help="SettleRequest JSON ('-' for stdin)")
    _connection(p)
    p.add_argument(
        "--output",
        choices=("table", "json", "html"),
        default="table",
        help="html: a self-contained page that verifies itself (docs/VIEWS.md)",
    )
    _lang(p)
    p.set_defaults(func=cmd_settle)

    p = sub.add_parser("validate", help="check a dealer's proposed payouts")
    p.add_argument("file", help="SettleRequest JSON (or a ValidatePayoutsRequest JSON)")
    p.add_argument(
        "--proposed",
        nargs="+",
        metavar="PLAYER=AMOUNT",
        help="the dealer's proposed net per player, in minor units",
    )
    _connection(p)
    _output(p)
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("evaluate", help="evaluate one arrangement (or 13 cards)")
    p.add_argument("file", nargs="?", help="EvaluateArrangementRequest JSON")
    p.add_argument("--preset", default="one-six")
    p.add_argument("--front", help="3 cards, e.g. 'As Ad 2c'")
    p.add_argument("--middle", help="5 cards")
    p.add_argument("--back", help="5 cards")
    p.add_argument("--cards", help="13 loose cards (to look for naturals)")
    p.add_argument("--in-fantasyland", action="store_true")
    _connection(p)
    _output(p)
    p.set_defaults(func=cmd_evaluate)

    from . import proof, views, web

    proof.add_parsers(sub, _connection)
    views.hand.add_parser(sub)
    web.add_parser(sub)

    p = sub.add_parser("replay", help="settle a stored request again and list every difference")
    p.add_argument("request", help="the SettleRequest JSON")
    p.add_argument("settlement", help="the stored settlement (JSON or binary)")
    _connection(p)
    _output(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("profiles", help="list profiles, or show one")
    p.add_argument("name", nargs="?")
    _connection(p)
    _output(p)
    p.set_defaults(func=cmd_profiles)

    from .audit import command as audit

    audit.add_parser(sub, _connection)
    return parser


def print_error(error: CliError) -> None:
    print(f"cpsettle: {shown(str(error))}", file=sys.stderr)
    for v in error.violations:
        print(f"  - {shown(str(v))}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except CliError as e:
        print_error(e)
        return e.code
    except KeyboardInterrupt:
        print("cpsettle: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
