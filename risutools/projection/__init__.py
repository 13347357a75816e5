"""risutools.projection"""
