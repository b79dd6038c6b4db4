"""The class network (:mod:`models.class_flow`): exact solvers on classes of members and pools."""
