"""Settings shared by the test scripts in tests/."""
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Both renderers run with strftime_now pinned and in UTC so outputs are
# reproducible (tests/run_tests.sh exports the same values).
PINNED_ENV = {"CHATFMT_NOW": "2026-03-14T15:09:26", "TZ": "UTC"}


def shared_dir():
    """The read-only reference material: $CHATFMT_SHARED, else ../shared beside the repo."""
    return os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))
