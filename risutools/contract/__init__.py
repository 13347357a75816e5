"""risutools.contract"""
