"""Shared command-line handling of the examples: the server address and the output directory."""

import argparse
import os


def arguments(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--server", default=os.environ.get("DENOC_SERVER", "127.0.0.1:50051"),
                        help="denocd address (default: $DENOC_SERVER or 127.0.0.1:50051)")
    parser.add_argument("--out", default=".", help="directory for the PNG (default: the current one)")
    return parser.parse_args()
