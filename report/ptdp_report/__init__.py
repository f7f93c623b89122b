"""ptdp's report generator: figures and report.md from ptdp.sweep-results/1 files.

load reads and groups the results, derive holds eq. (1) (Figure 8 from Figure 7),
layouts says how each experiment is drawn, figures draws it, markdown writes report.md.
"""
