"""Library of the book *Pointwise metrics mislead*: metrics, models, data, plotting, runner."""
