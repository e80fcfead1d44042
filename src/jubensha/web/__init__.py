"""jubensha.web"""
