"""BENCHMARKS_TRAIN.md, "MaskablePPO, sb3-contrib": trains runs/<exp_name>-s<seed>/ (no model shipped from it).

MaskablePPO (sb3-contrib) against an opponent pool with self-play: ``midnight train --algo maskable_ppo``.

    python experiments/train_ppo.py --config configs/sb3-midnight_party-4p.yaml
    python experiments/train_ppo.py --config configs/sb3-hidden_castle-4p.yaml --override total_timesteps=200000

The training code is library code (``midnight_env.training.sb3``); this script only reads the
command line, so that experiments and ``midnight train`` cannot drift apart. Needs the package
installed (``pip install -e '.[train]'``).
"""

from __future__ import annotations

import argparse
import sys

from midnight_env.commands.train import add_train_arguments, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_train_arguments(parser, algo="maskable_ppo")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
