"""Panels: controls -> a library run -> a figure redrawn in place and one line of what changed (``base``).
``tour`` 00, ``compiler`` 01 and 02, ``runtime`` 03 to 05, ``closed_loop`` 06, ``drill`` 07, ``serving`` 08;
``compare`` and ``token_compare`` say what a change did, ``answers`` answer a panel's predictions."""
