"""Settings: the one configuration object (defaults < file < command line), its schema as
data (``schemas/settings-v1.schema.json``), the typed views of its sections, and the review
lifecycle as one table (:mod:`risutools.settings.lifecycle`)."""
