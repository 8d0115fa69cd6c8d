"""`python -m runners.cli`: the same as the `eqsat-test` script."""
from eqsat_test.runners.cli.main import main

main()
