"""The ``workbench`` commands for interview practice: grade, practice, interview, progress."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli_io import MAX_ANSWER_BYTES, UsageError, dumps, output_error, say, writable_folder
from workbench.errors import ConfigError


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
    """``workbench practice``: an interview practice session in the terminal."""
    from workbench.grading.drills import load_drills
    from workbench.grading.practice import session
    from workbench.grading.store import Store

    drills = load_drills(args.drills_dir)
    figures = writable_folder(Path(args.figures), "--figures") if args.figures else None
    store = Store(args.db)
    try:
        session(drills, store, count=args.drills, topic=args.topic, minutes=args.minutes, figure_dir=figures)
    except KeyboardInterrupt:
        print("\nsession stopped; saved attempts are kept")
    except OSError as e:  # a figure that may not be written
        raise output_error(figures or Path("."), e) from None
    finally:
        store.close()
    return 0


def cmd_interview(args: argparse.Namespace) -> int:
    """``workbench interview``: a mock interview with follow-up questions, graded as a whole."""
    from workbench.grading.drills import get_drill, load_drills
    from workbench.grading.interview import run_interview
    from workbench.grading.practice import prepare
    from workbench.grading.store import Store, pick_drills

    if args.minutes is not None and not 0 < args.minutes <= 24 * 60:
        raise UsageError(f"--minutes {args.minutes}: must be in (0, 1440]")
    store = Store(args.db)
    try:
        if args.drill:
            drill = get_drill(args.drill, args.drills_dir)
        else:
            drills = load_drills(args.drills_dir)
            drill = drills[pick_drills(sorted(drills), store, 1)[0]]
        ev = prepare(drill)
        run_interview(drill, store, ev.table, ev.reference, minutes=args.minutes)
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
