"""A file that defines no model in any accepted convention: the job ends as bad-input."""
X = 1
