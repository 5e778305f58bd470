from ..conftest import scratch  # noqa: F401 - the tmpfs scratch folder of the crash tests
