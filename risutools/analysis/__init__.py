"""risutools.analysis"""
