"""risutools.catalog"""
