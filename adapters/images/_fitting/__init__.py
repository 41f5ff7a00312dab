"""Fitting an image to a byte budget: the plan (`_plan`: formats, the measured quality
floors), the search at one size (`_at_size`) and the shrinking (`_fit`)."""

from ._fit import fit
from ._plan import Encoded, FitPlan, plan

__all__ = ["Encoded", "FitPlan", "fit", "plan"]
