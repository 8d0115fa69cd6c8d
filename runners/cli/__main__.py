"""`python -m runners.cli`: the same as the `eqsat-test` script."""
from runners.cli.main import main

main()
