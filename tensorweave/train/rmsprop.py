"""RMSProp (optionally centered, with momentum), with TF 1.x's slot initialisation (rms = 1)."""
from tensorweave.ops import training_ops
from tensorweave.train.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False,
                 centered=False, name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay = learning_rate, decay
        self._momentum, self._epsilon, self._centered = momentum, epsilon, centered

    def _create_slots(self, var_list):
        for var in var_list:
            self._ones_slot(var, "rms")
            if self._centered:
                self._zeros_slot(var, "mg")
            self._zeros_slot(var, "momentum")

    def _apply_dense(self, grad, var):
        hyper = [self._hyper(self._learning_rate, var, "learning_rate"),
                 self._hyper(self._decay, var, "decay"),
                 self._hyper(self._momentum, var, "momentum"),
                 self._hyper(self._epsilon, var, "epsilon"), grad]
        rms = self.get_slot(var, "rms")._variable
        mom = self.get_slot(var, "momentum")._variable
        if self._centered:
            mg = self.get_slot(var, "mg")._variable
            return training_ops.apply("ApplyCenteredRMSProp", [var._variable, mg, rms, mom] + hyper,
                                      use_locking=self._use_locking).op
        return training_ops.apply("ApplyRMSProp", [var._variable, rms, mom] + hyper,
                                  use_locking=self._use_locking).op
