"""The ``workbench`` commands for interview practice: grade, practice, interview, progress, drills check.

Practice and the interview read the terminal as UTF-8 with undecodable bytes replaced (U+FFFD), so no byte the
learner sends can stop them; Ctrl-C ends either with a line saying what was saved.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli_io import EXIT_BAD_INPUT, MAX_ANSWER_BYTES, UsageError, dumps, output_error, say, writable_folder
from workbench.errors import ConfigError
from workbench.terminal import printable


def _utf8_stdin() -> None:
    """Decode standard input as UTF-8, bytes that are not replaced by U+FFFD (before anything is read from it)."""
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(encoding="utf-8", errors="replace")
        except (ValueError, OSError):  # already read from, or closed: the readers replace what is left
            pass


def cmd_grade(args: argparse.Namespace) -> int:
    """``workbench grade``: grade an answer (file or stdin) against a drill."""
    from workbench.grading.drills import get_drill
    from workbench.grading.grader import check_answer, grade
    from workbench.grading.practice import feedback

    drill = get_drill(args.drill, args.drills_dir)
    if args.answer_file:
        path = Path(args.answer_file)
        try:
            if not path.exists():
                raise UsageError(f"--answer-file {path}: no such file")
            if not path.is_file():
                raise UsageError(f"--answer-file {path}: not a regular file")
            with path.open("rb") as f:  # bounded: past the limit it is refused, never read whole
                raw = f.read(MAX_ANSWER_BYTES + 1)
        except OSError as e:
            raise UsageError(f"--answer-file {args.answer_file}: cannot read ({e.strerror or e})") from None
    else:
        raw = sys.stdin.buffer.read(MAX_ANSWER_BYTES + 1)
    if len(raw) > MAX_ANSWER_BYTES:
        raise UsageError(f"answer: more than {MAX_ANSWER_BYTES} bytes; answers are at most 20,000 characters")
    try:
        text = check_answer(raw)
    except ConfigError as e:
        raise UsageError(f"{args.answer_file or 'stdin'}: {e}") from None
    g = grade(drill, text)
    print(dumps(g.to_json())) if args.json else say(feedback(g))
    return 0


def cmd_practice(args: argparse.Namespace) -> int:
    """``workbench practice``: an interview practice session in the terminal. Ctrl-C at any point ends it: the
    attempts saved so far are kept, the one being typed is not saved."""
    _utf8_stdin()
    store = figures = None
    try:
        from workbench.grading.drills import load_drills
        from workbench.grading.practice import session
        from workbench.grading.store import Store

        drills = load_drills(args.drills_dir)
        figures = writable_folder(Path(args.figures), "--figures") if args.figures else None
        store = Store(args.db)
        session(drills, store, count=args.drills, topic=args.topic, minutes=args.minutes, figure_dir=figures)
    except KeyboardInterrupt:
        print("\nsession stopped; saved attempts are kept")
    except OSError as e:  # a figure that may not be written
        raise output_error(figures or Path("."), e) from None
    finally:
        if store is not None:
            store.close()
    return 0


def _interview_setup(args: argparse.Namespace):
    """(drill, evidence, open store) of an interview: the drill read, its runs simulated, the reference rendered."""
    from workbench.grading.drills import get_drill, load_drills
    from workbench.grading.interview import run_interview  # noqa: F401  (loaded here: Ctrl-C during it saves nothing)
    from workbench.grading.practice import prepare
    from workbench.grading.store import Store, pick_drills

    store = Store(args.db)
    try:
        if args.drill:
            drill = get_drill(args.drill, args.drills_dir)
        else:
            drills = load_drills(args.drills_dir)
            drill = drills[pick_drills(sorted(drills), store, 1)[0]]
        return drill, prepare(drill), store
    except BaseException:
        store.close()
        raise


def cmd_interview(args: argparse.Namespace) -> int:
    """``workbench interview``: a mock interview with follow-up questions, graded as a whole. Ctrl-C before the
    first question saves nothing; after it, what was answered is saved, marked incomplete."""
    if args.minutes is not None and not 0 < args.minutes <= 24 * 60:
        raise UsageError(f"--minutes {args.minutes}: must be in (0, 1440]")
    _utf8_stdin()
    try:
        drill, ev, store = _interview_setup(args)
    except KeyboardInterrupt:  # while the modules load or the drill's runs are simulated: nothing answered yet
        print("\ninterrupted before the interview began; nothing saved")
        return 0
    from workbench.grading.interview import run_interview

    try:
        run_interview(drill, store, ev.table, ev.reference, minutes=args.minutes)  # saves what was answered
    finally:
        store.close()
    return 0


def cmd_progress(args: argparse.Namespace) -> int:
    """``workbench progress``: practice history and per-element rates."""
    from workbench.grading.practice import progress_report
    from workbench.grading.store import Store

    store = Store(args.db, create=False)  # read-only: never creates a file or a folder
    try:
        say(progress_report(store))
    finally:
        store.close()
    return 0


def cmd_drills_check(args: argparse.Namespace) -> int:
    """``workbench drills check DIR``: every drill file in DIR checked as it loads (its scenario overrides applied;
    with ``--run``, its runs simulated and its reference rendered). Exit 0 and one summary line on stdout when all
    are fine; else exit 2 and one ``workbench: error:`` line per problem on stderr (a file's first problem)."""
    from workbench.grading.drill_folder import check_dir

    summary, problems = check_dir(Path(args.dir), run=args.run)
    for line in problems:
        print(f"workbench: error: {printable(line, one_line=True)}", file=sys.stderr)
    if problems:
        return EXIT_BAD_INPUT
    say(summary)
    return 0


def add_drills_parser(sub) -> None:
    """The ``drills`` command and its ``check`` subcommand, added to the ``workbench`` parser's subparsers."""
    dr = sub.add_parser("drills", help="tools for drill authors (drills check DIR)")
    dsub = dr.add_subparsers(dest="drills_command", metavar="check", required=True)
    ck = dsub.add_parser("check", help="check every drill file in a folder: exit 0 and a summary when all are fine, "
                         "else exit 2 and one line per problem")
    ck.add_argument("dir", metavar="DIR", help="a folder of drill files (drills/ for the built-in ones)")
    ck.add_argument("--run", action="store_true", help="also simulate each drill's runs and render its reference "
                    "(seconds per drill)")
    ck.set_defaults(func=cmd_drills_check)
