# The history checker against histories written by hand: one good, and a
# bad one for each rule.
sluice_test(history LIBS t_history TIMEOUT 60)
