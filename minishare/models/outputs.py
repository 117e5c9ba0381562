"""What models return: a small record with named fields, like Hugging Face's ``ModelOutput``
(``out.loss``, ``out.last_hidden_state``); fields a model did not compute are None."""


class ModelOutput:
    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __getattr__(self, name):          # an absent field reads as None
        if name.startswith("__"):
            raise AttributeError(name)
        return None

    def keys(self):
        return [k for k, v in self.__dict__.items() if v is not None]

    def __repr__(self):
        return "ModelOutput(" + ", ".join(self.keys()) + ")"
