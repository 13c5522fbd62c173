"""The drills stage: drill library, grader, practice sessions and saved progress."""
