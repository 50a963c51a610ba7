"""Small problems with exactly known posteriors, used by chapter 1 to check its claims."""
