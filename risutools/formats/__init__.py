"""Read and write Risu containers. No analysis here, and nothing is executed.

Public API: :func:`detect`, :func:`read_path`, :mod:`~risutools.formats.rpack`
(``encode``/``decode``), :mod:`~risutools.formats.risum` (``write_risum``,
``read_risum``), and the model classes.
"""

from risutools.formats.model import Anomaly, AssetInfo, Module, SourceInfo
from risutools.formats.reader import FORMATS, detect, named_as_risu, read_path

__all__ = ["FORMATS", "Anomaly", "AssetInfo", "Module", "SourceInfo", "detect", "named_as_risu",
           "read_path"]
