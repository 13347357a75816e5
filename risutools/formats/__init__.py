"""Read and write Risu containers. No analysis here, and nothing is executed."""

from risutools.formats.model import Anomaly, AssetInfo, Module, SourceInfo

__all__ = ["Anomaly", "AssetInfo", "Module", "SourceInfo"]
