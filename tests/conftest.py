"""Suite-wide test settings."""

from hypothesis import HealthCheck, settings

# CI shares two cores with servers the tests start (moto, HTTP): a property
# test must not fail because one example ran slowly.
settings.register_profile(
    "zarrpy", deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
settings.load_profile("zarrpy")
