"""`tf.app.flags` / `tf.flags`: command-line flags defined at import time, parsed from sys.argv.

Flags are parsed on first access (or by `tf.app.run`), from the known `--name=value`,
`--name value`, `--flag` / `--noflag` arguments; unknown arguments are left for the program.
"""
import sys


class _Flag:
    def __init__(self, name, default, help_text, parser, kind):
        self.name, self.default, self.help, self.parse, self.kind = (name, default, help_text,
                                                                      parser, kind)
        self.value = default


def _parse_bool(text):
    lowered = str(text).lower()
    if lowered in ("1", "true", "t", "yes", "y"):
        return True
    if lowered in ("0", "false", "f", "no", "n"):
        return False
    raise ValueError(f"{text!r} is not a boolean (use true/false)")


class _FlagValues:
    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, flag):
        if flag.name in self._flags:
            raise ValueError(f"Flag --{flag.name} is defined twice")
        self._flags[flag.name] = flag

    def __call__(self, argv):
        """Parses `argv` (argv[0] is the program); returns the arguments left unparsed."""
        remaining = [argv[0]] if argv else []
        args = list(argv[1:])
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                remaining.extend(args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                remaining.append(arg)
                i += 1
                continue
            body = arg.lstrip("-")
            name, has_value, value = body.partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.kind == "bool":
                    negated.value = False
                    i += 1
                    continue
            if flag is None:
                remaining.append(arg)
                i += 1
                continue
            if not has_value:
                if flag.kind == "bool":
                    flag.value = True
                    i += 1
                    continue
                if i + 1 >= len(args):
                    raise ValueError(f"Flag --{name} needs a value")
                value = args[i + 1]
                i += 1
            try:
                flag.value = flag.parse(value)
            except ValueError as exc:
                raise ValueError(f"Invalid value for flag --{name}: {exc}") from None
            i += 1
        object.__setattr__(self, "_parsed", True)
        return remaining

    def _ensure_parsed(self):
        if not self._parsed:
            self(sys.argv)

    def __getattr__(self, name):
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(f"Unknown command line flag {name!r}")
        self._ensure_parsed()
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError(f"Unknown command line flag {name!r}")
        self._flags[name].value = value

    def __contains__(self, name):
        return name in self._flags

    def flag_values_dict(self):
        self._ensure_parsed()
        return {name: flag.value for name, flag in self._flags.items()}

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def help_text(self):
        return "\n".join(f"  --{f.name}: {f.help} (default: {f.default!r})"
                         for f in self._flags.values())


FLAGS = _FlagValues()


def _list(text):
    return [] if text == "" else [item.strip() for item in str(text).split(",")]


def DEFINE_string(name, default, help, flag_values=FLAGS):  # noqa: N802, A002 - TF's names
    flag_values._define(_Flag(name, default, help, str, "string"))


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None,  # noqa: N802, A002
                   flag_values=FLAGS):
    def parse(text):
        value = int(text)
        if lower_bound is not None and value < lower_bound or \
                upper_bound is not None and value > upper_bound:
            raise ValueError(f"{value} is outside [{lower_bound}, {upper_bound}]")
        return value
    flag_values._define(_Flag(name, default, help, parse, "int"))


def DEFINE_float(name, default, help, flag_values=FLAGS):  # noqa: N802, A002
    flag_values._define(_Flag(name, default, help, float, "float"))


def DEFINE_boolean(name, default, help, flag_values=FLAGS):  # noqa: N802, A002
    flag_values._define(_Flag(name, default, help, _parse_bool, "bool"))


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name, default, help, flag_values=FLAGS):  # noqa: N802, A002
    flag_values._define(_Flag(name, default, help, _list, "list"))


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS):  # noqa: N802, A002
    def parse(text):
        if text not in enum_values:
            raise ValueError(f"{text!r} is not one of {list(enum_values)}")
        return text
    flag_values._define(_Flag(name, default, help, parse, "enum"))


def mark_flag_as_required(name, flag_values=FLAGS):
    if flag_values.flag_values_dict().get(name) is None:
        raise ValueError(f"Flag --{name} must be specified.")
