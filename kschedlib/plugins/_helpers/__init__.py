"""Code several in-tree plugins share (kube-scheduler's ``plugins/helper``): normalization, argument
validation, volumes, CSI translation, preemption victims and Go's sort."""
