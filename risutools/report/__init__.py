"""risutools.report"""
