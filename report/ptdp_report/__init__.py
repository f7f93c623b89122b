"""ptdp's report generator: figures and report.md from ptdp.sweep-results/1 files.

load reads every ptdp JSON file (strictly, for the report and the scripts alike) and groups
the sweep results, output writes one as core/io/staged_file.h does, points reads a point's
fields, derive holds eq. (1) (Figure 8 from Figure 7), layouts says how each experiment is
drawn, figures draws it, markdown writes report.md with tables from tables and the ablation,
modern, memory and closure sections.
"""
