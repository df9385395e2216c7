"""The executive loop: iteration phases, work selection, outcomes, retrospectives."""
