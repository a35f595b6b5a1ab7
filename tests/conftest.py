"""Suite-wide test settings."""

from hypothesis import HealthCheck, settings

# CI shares two cores with servers the tests start (moto, HTTP): a property
# test must not fail because one example ran slowly.
settings.register_profile(
    "zarrpy", deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
# Long runs (``pytest --hypothesis-profile=fuzz``): 50 times the examples;
# the decoder fuzz tests (tests/codecs/test_fuzz_decoders.py) run 1000 each.
settings.register_profile("fuzz", settings.get_profile("zarrpy"), max_examples=5000)
settings.load_profile("zarrpy")
