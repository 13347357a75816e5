"""risutools.replay"""
