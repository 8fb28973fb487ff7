"""The command line's shared parts: option groups, messages on stderr, progress bars and output
checks, used by :mod:`simdedup.cli` and the command groups of :mod:`simdedup.store`."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

import click

from .compat import PRESETS
from .errors import MissingPackage, PluginError, SimdedupError
from .hashing import HASHES
from .help import ENGINES, FEATURES, FINDING, OUTPUT, READING, RUNNING, SectionedCommand, in_section, section
from .limits import (
    MAX_BYTES,
    MAX_COMPARED,
    MAX_COUNT,
    MAX_JOBS,
    MAX_SHINGLE,
    MAX_SKETCH_BYTES,
    FiniteFloatRange,
    check_memory,
)
from .messages import message, printable  # noqa: F401 (re-exported for the commands)
from .method_registry import BUILTIN as METHODS
from .method_registry import DEFAULT_METHOD, FEATURE_DEFAULTS, method_names, method_spec

EXIT_SKIPPED = 3


def echo(text: str) -> None:
    """``text`` and a newline on stdout (an error when it cannot be written)."""
    from .write import write_all

    with output_file(None, False).open() as fd:
        write_all(fd, (text + "\n").encode("utf-8", "surrogateescape"))


def progress(iterable: Any, silent: bool, **kwargs: Any) -> Any:
    """``iterable`` wrapped in a tqdm bar on stderr, when stderr is a terminal and not silent."""
    if silent or not sys.stderr.isatty():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kwargs)


def output_file(
    path: str | None, force: bool, inputs: tuple[str, ...] = (), stdin: bool = False, binary: bool = False
) -> Any:
    """The output ``-o`` names (:class:`simdedup.write.OutputFile`), refused when it would
    replace one of the named ``inputs`` or, with ``stdin``, the file on stdin."""
    from .write import OutputFile

    output = OutputFile(path, force, binary)
    output.refuse_inputs(inputs, stdin)
    return output


def _checked_globs(ctx: click.Context, param: click.Parameter, patterns: tuple[str, ...]) -> tuple[str, ...]:
    """The patterns of --glob or --exclude, each a shell glob (an unclosed '[' refused, not taken
    as a literal that matches nothing)."""
    from .read.walk import glob_problem

    for pattern in patterns:
        problem = glob_problem(pattern)
        if problem is not None:
            raise click.BadParameter(f"{pattern!r}: {problem}")
    return patterns


def _storage_options(ctx: click.Context, param: click.Parameter, items: tuple[str, ...]) -> None:
    from .read.remote import use_storage_options

    if items:
        try:
            use_storage_options(items)
        except SimdedupError as exc:
            raise click.BadParameter(str(exc)) from None


#: how to reach the store of inputs and outputs named by URL (s3://, gs://, az://, ...)
storage_option = click.option(
    "--storage-option",
    multiple=True,
    metavar="K=V",
    expose_value=False,
    is_eager=True,
    callback=_storage_options,
    help="An option of the store of URLs, e.g. endpoint_url=URL (repeatable).",
)
storage_option = section(ENGINES, storage_option)


def apply_options(options: list[Callable], func: Callable) -> Callable:
    for option in reversed(options):
        func = option(func)
    return func


class MethodChoice(click.Choice):
    """The registered methods (:mod:`simdedup.methods`), listed when first needed: the
    installed packages' entry points are scanned only then, not at every start."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(method_names())

    @choices.setter
    def choices(self, value: Any) -> None:
        pass


def _method_option(method: str, option: Any) -> Callable:
    """The decorator adding a method's own option (:class:`MethodOption`) to a command."""

    def add(func: Callable) -> Callable:
        param = option.click_option(method)
        param.section = FEATURES  # type: ignore[attr-defined]
        func.__dict__.setdefault("__click_params__", []).append(param)
        return func

    return add


class FingerprintingCommand(SectionedCommand):
    """A command with the feature options. The options of methods that plugins register join
    them (after the built-in methods' own) when it parses or shows its help: only the commands
    that fingerprint scan the installed packages' entry points, and only when run."""

    _plugin_params: list[click.Parameter] | None = None

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        if self._plugin_params is None:
            self._plugin_params = self._options_of_plugins()
        if not self._plugin_params:
            return params
        names = [param.name for param in params]
        built_in = {"method", *(option.name for spec in METHODS.values() for option in spec.options)}
        after = max(position for position, name in enumerate(names) if name in built_in) + 1
        return [*params[:after], *self._plugin_params, *params[after:]]

    def _options_of_plugins(self) -> list[click.Parameter]:
        taken = {name for param in self.params for name in (param.name, *param.opts)}
        found: list[click.Parameter] = []
        for name in method_names():
            if name in METHODS:
                continue
            for option in method_spec(name).options:  # type: ignore[union-attr]
                param = option.click_option(name)
                if taken & {param.name, *param.opts}:
                    message(f"simdedup: warning: method plugin {name!r}: option {option.flag} is taken; left out")
                    continue
                taken |= {param.name, *param.opts}
                param.section = FEATURES  # type: ignore[attr-defined]
                found.append(param)
        return found


# How features and fingerprints are made: shared by fingerprint, dedup, explain and index create
# (commands of class FingerprintingCommand, which adds the options of methods from plugins).
FEATURE_OPTIONS = [
    click.option(
        "--method",
        type=MethodChoice(),
        default=DEFAULT_METHOD,
        show_default=True,
        metavar="NAME",
        help=f"{', '.join(list(METHODS)[:-1])} or {list(METHODS)[-1]} (README).",
    ),
    *(_method_option(spec.name, option) for spec in METHODS.values() for option in spec.options),
    click.option(
        "--hash",
        "hash_name",
        type=click.Choice(HASHES),
        default=FEATURE_DEFAULTS["hash_name"],
        show_default=True,
        metavar="NAME",
        help="Feature hash (md5 and the others: other tools').",
    ),
    click.option(
        "--tokenizer",
        "tokenizer_name",
        default=FEATURE_DEFAULTS["tokenizer"],
        show_default=True,
        metavar="NAME",
        help="Tokenizer (`simdedup tokenizers` lists them).",
    ),
    click.option("--shingle", type=click.IntRange(1, MAX_SHINGLE), help="Features are N-grams of tokens."),
    click.option("--topk", type=click.IntRange(1, MAX_COUNT), help="Keywords jieba keeps [default: 20]."),
    click.option(
        "-O",
        "--tokenizer-option",
        "tokenizer_options",
        multiple=True,
        metavar="K=V",
        help="A tokenizer option (repeatable).",
    ),
    click.option(
        "--bits",
        type=click.Choice(["64", "128"]),
        default=str(FEATURE_DEFAULTS["bits"]),
        show_default=True,
        help="Fingerprint width.",
    ),
    click.option(
        "--weighting",
        type=click.Choice(["binary", "feature"]),
        metavar="HOW",
        help="binary: a vote a feature; feature: by its weight [default: binary for words].",
    ),
    click.option(
        "--ties",
        type=click.Choice(["zero", "one"]),
        help="What a bit whose votes tie is [default: zero].",
    ),
    click.option(
        "--fold",
        type=click.Choice(["chinese"]),
        help="chinese: traditional as simplified in the shingles the measure compares, not in the "
        "features (the zh-fold extra).",
    ),
    click.option(
        "--compat",
        type=click.Choice(list(PRESETS)),
        metavar="TOOL",
        multiple=True,  # given twice: refused, not the last one winning
        help="Another tool's fingerprints (README); options beside it must agree.",
    ),
]
FEATURE_OPTIONS = in_section(FEATURES, FEATURE_OPTIONS)
# The record's sketch: what fingerprints carry to verify with, where the texts are not at hand
SKETCH_OPTIONS = [
    click.option(
        "--sketch",
        "sketch_bins",
        type=click.IntRange(0, MAX_SKETCH_BYTES),
        default=FEATURE_DEFAULTS["sketch_bins"],
        show_default=True,
        help="Bytes of sketch a record (to verify).",
    ),
    click.option(
        "--sketch-of",
        type=click.Choice(["shingles", "features"]),
        metavar="WHAT",
        help="shingles, or features (for the bag).",
    ),
]
SKETCH_OPTIONS = in_section(FEATURES, SKETCH_OPTIONS)
# How documents are read into text: with the feature options wherever documents are read
READING_OPTIONS = [
    click.option(
        "--encoding",
        default=FEATURE_DEFAULTS["encoding"],
        show_default=True,
        help="Of the documents (auto: detect it).",
    ),
    click.option(
        "--html",
        is_flag=True,
        help="Documents are HTML: use their visible text.",
    ),
]


READING_OPTIONS = in_section(READING, READING_OPTIONS)


def feature_options(func: Callable) -> Callable:
    return apply_options(FEATURE_OPTIONS + SKETCH_OPTIONS + READING_OPTIONS, func)


def feature_options_without_reading(func: Callable) -> Callable:
    """The feature options of a command that reads no documents (index create: index query
    takes --encoding and --html)."""
    return apply_options(FEATURE_OPTIONS + SKETCH_OPTIONS, func)


def feature_options_without_sketch(func: Callable) -> Callable:
    """The feature options of a command that makes no records (report: its pairs are measured
    on their texts)."""
    return apply_options(FEATURE_OPTIONS + READING_OPTIONS, func)


INPUT_OPTIONS = [
    click.argument("paths", nargs=-1, type=click.Path(dir_okay=True, allow_dash=True, readable=False)),
    click.option("-0", "--null", is_flag=True, help="Paths on stdin (-) are NUL-separated."),
    click.option(
        "--jsonl/--no-jsonl",
        default=None,
        help="Files are JSON lines [default: *.jsonl].",
    ),
    click.option(
        "--text-field", default="text", show_default=True, metavar="FIELD", help="The text's field (a.b: nested)."
    ),
    click.option("--id-field", metavar="FIELD", help="The id's field [default: FILE:LINE]."),
    click.option(
        "--glob",
        "globs",
        multiple=True,
        metavar="PATTERN",
        help="Walks take only what matches.",
        callback=_checked_globs,
    ),
    click.option(
        "--exclude",
        "excludes",
        multiple=True,
        metavar="PATTERN",
        help="Walks leave out what matches.",
        callback=_checked_globs,
    ),
    click.option("--min-bytes", type=click.IntRange(0, MAX_BYTES), default=0, help="Walks leave out smaller files."),
    click.option(
        "--max-line-bytes",
        type=click.IntRange(1 << 20, MAX_BYTES),
        help="Longer lines are skipped [default: 128 MiB].",
    ),
]


INPUT_OPTIONS = in_section(READING, INPUT_OPTIONS)


#: the reading options, by parameter name, in the order of :class:`simdedup.read.Inputs`' fields
INPUT_NAMES = ("null", "jsonl", "text_field", "id_field", "globs", "excludes", "min_bytes", "max_line_bytes")


def documents_option(help: str) -> Callable[[Callable], Callable]:
    """``--documents PATH`` (repeatable) with the options that say how they are read: the texts
    a command reads by id (report, explain)."""

    def decorate(func: Callable) -> Callable:
        func = apply_options(INPUT_OPTIONS[1:], func)
        return click.option(
            "--documents",
            "document_paths",
            multiple=True,
            type=click.Path(allow_dash=True, readable=False),
            metavar="PATH",
            help=help,
        )(func)

    return decorate


def take_document_inputs(document_paths: tuple[str, ...], kwargs: dict[str, Any]) -> Any:
    """:func:`take_inputs` of a command with :func:`documents_option`: a reading option given
    without --documents reads nothing, so it is refused."""
    if not document_paths:
        for name in INPUT_NAMES:
            if given_on_command_line(name):
                raise click.UsageError(f"{option_flag(name)} says how --documents are read; give --documents")
    return take_inputs(kwargs)


def take_inputs(kwargs: dict[str, Any]) -> Any:
    """Take the input options out of a command's keyword arguments (:class:`simdedup.read.Inputs`);
    with ``--features-field``, the field read is that one, as a :class:`simdedup.read.FeaturesField`."""
    from .read import FeaturesField, Inputs

    inputs = Inputs(*(kwargs.pop(name) for name in INPUT_NAMES))
    inputs.encoding = kwargs.get("encoding") or inputs.encoding  # a feature option too: left for the method
    if inputs.max_line_bytes is not None:  # a line up to this long is read into memory whole
        check_memory(inputs.max_line_bytes, f"--max-line-bytes {inputs.max_line_bytes}")
    features_field = kwargs.pop("features_field", None)
    if features_field is not None:
        if given_on_command_line("text_field"):
            raise click.UsageError("give --text-field or --features-field, not both")
        inputs.text_field = FeaturesField(features_field)
    return inputs


# How a run goes (what it says, on how many processes): no option of these changes the output
RUNNING_OPTIONS = [
    click.option("-j", "--jobs", type=click.IntRange(1, MAX_JOBS), help="Processes to use [default: all cores]."),
    click.option("--silent", is_flag=True, help="No progress bar."),
    click.option("-v", "--verbose", is_flag=True, help="Every warning, and the encodings auto chose."),
]


def fingerprint_options(func: Callable) -> Callable:
    return apply_options(
        [
            *INPUT_OPTIONS,
            section(
                READING,
                click.option(
                    "--features-field", metavar="FIELD", help="The field of the features instead of the text."
                ),
            ),
            *FEATURE_OPTIONS,
            *SKETCH_OPTIONS,
            *READING_OPTIONS,
            *in_section(RUNNING, RUNNING_OPTIONS),
        ],
        func,
    )


def output_options(func: Callable) -> Callable:
    func = section(OUTPUT, click.option("--force", is_flag=True, help="Replace the -o file if it exists."))(func)
    return section(
        OUTPUT,
        click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, allow_dash=True),
            help="Write to this file instead of stdout.",
        ),
    )(func)


def decision_options(names: Iterable[str], as_in: str | None = None, **helps: str) -> list[Callable]:
    """The options of the decision rule and of cluster output (``similarity``, ``min-similarity``,
    ``min-resemblance``, ``linkage``, ``min-features``, ``singletons``, ``format``), each declared
    here once with its type and default (``options.DEFAULTS``): ``as_in`` names the command whose
    help another command's options refer to, and ``helps`` (by name, ``-`` as ``_``) replaces a
    help text."""
    from .options import DEFAULTS, LINKAGES, OUTPUT_FORMATS
    from .similarity import MEASURES

    declared = {
        "similarity": (
            ("--similarity",),
            {"type": click.Choice(MEASURES), "default": DEFAULTS.similarity, "metavar": "MEASURE"},
            "resemblance (of shingles), bag (of words) or combined.",
        ),
        "min-similarity": (
            ("--min-similarity",),
            {"type": FiniteFloatRange(0, 1), "default": DEFAULTS.min_similarity},
            "Least bag similarity of a duplicate.",
        ),
        "min-resemblance": (
            ("--min-resemblance",),
            {"type": FiniteFloatRange(0, 1), "default": DEFAULTS.min_resemblance},
            "Least resemblance of a duplicate.",
        ),
        "linkage": (
            ("--linkage",),
            {"type": click.Choice(LINKAGES), "default": DEFAULTS.linkage, "metavar": "KIND"},
            "complete: every pair passes; star: each with the centre; single: chains.",
        ),
        "min-features": (
            ("--min-features",),
            {"type": click.IntRange(0, MAX_COMPARED), "default": DEFAULTS.min_features},
            "Documents with fewer group with exact copies only.",
        ),
        "bands": (
            ("--bands/--no-bands", "bands"),
            {"default": None},
            "Pairs whose sketches share a band too [default: without -k].",
        ),
        "singletons": (("--singletons",), {"is_flag": True}, "Also print documents with no duplicate."),
        "format": (
            ("--format", "output_format"),
            {"type": click.Choice(OUTPUT_FORMATS), "default": DEFAULTS.output_format, "metavar": "FORM"},
            "clusters: a line per cluster; members: per document.",
        ),
    }
    options = []
    for name in names:
        declarations, settings, text = declared[name]
        if as_in is not None:
            text = f"As {as_in}'s {declarations[0]}."
        text = helps.get(name.replace("-", "_"), text)
        shown = {} if settings.get("is_flag") or settings.get("default", 0) is None else {"show_default": True}
        title = OUTPUT if name in ("singletons", "format") else FINDING
        options.append(section(title, click.option(*declarations, **settings, **shown, help=text)))
    return options


def cluster_options(func: Callable) -> Callable:
    from .options import DEFAULTS

    return apply_options(
        [
            click.option(
                "-k",
                "--k",
                "k",
                type=click.IntRange(0, 63),
                help="Largest Hamming distance of a candidate pair "
                f"[default: {DEFAULTS.DEFAULT_K_SHINGLES}, and the sketches' bands].",
            ),
            *decision_options(["similarity", "min-similarity", "min-resemblance", "linkage", "min-features", "bands"]),
            *in_section(FINDING, [option for spec in METHODS.values() for option in spec.cluster_options]),
            *decision_options(["singletons", "format"]),
        ],
        func,
    )


def final_feature_options(options: dict[str, Any], given: bool = False) -> dict[str, Any]:
    """The feature options with ``--compat``'s filled in (usage errors for options that
    disagree), and of the methods' own options only the chosen method's; ``given``: the input
    gives the features (``--features-field``)."""
    options = without_other_methods_options(options)
    presets = tuple(dict.fromkeys(options.pop("compat") or ()))
    if len(presets) > 1:
        raise click.UsageError(f"--compat takes one preset, not {' and '.join(presets)}")
    if presets:
        return _preset_options(presets[0], options, given)
    if given:
        _refuse_tokenizer_options(options)
    return options


def without_other_methods_options(options: dict[str, Any]) -> dict[str, Any]:
    """The feature options without the own options of methods other than ``options["method"]``
    (the command line has those of every registered method): what describes the fingerprints,
    whichever plugins are installed."""
    chosen = method_spec(options["method"])
    own = {option.name for option in chosen.options} if chosen else set()
    owners = {option.name: name for name in method_names() for option in method_spec(name).options}  # type: ignore[union-attr]
    others = set(owners) - own
    for name in sorted(others & set(options)):
        if click.get_current_context(silent=True) is not None and given_on_command_line(name):
            raise click.UsageError(f"{option_flag(name)} is an option of --method {owners[name]}")
    return {key: value for key, value in options.items() if key not in others}


def method_from_options(given: bool = False, **options: Any) -> Any:
    """The fingerprinting method the feature options describe (see :func:`feature_options_of`)."""
    return build_method(feature_options_of(options, given))


def feature_options_of(values: dict[str, Any], given: bool = False) -> Any:
    """The :class:`simdedup.options.FeatureOptions` a command's feature options name (by
    parameter name; see :func:`final_feature_options`)."""
    from .options import FeatureOptions

    final = final_feature_options(values, given)
    tokenizer_options: dict[str, Any] = {}
    for item in final.pop("tokenizer_options"):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--tokenizer-option")
        tokenizer_options[key.strip()] = value
    for name in ("shingle", "topk"):
        if (value := final.pop(name)) is not None:
            tokenizer_options[name] = value
    method = final.pop("method")
    spec = method_spec(method)
    own = spec.option_values(final) if spec else {}
    return FeatureOptions.of(
        method=method,
        tokenizer=final.pop("tokenizer_name"),
        tokenizer_options=tokenizer_options,
        bits=int(final.pop("bits")),
        hash_name=final.pop("hash_name"),
        weighting=final.pop("weighting"),
        ties=final.pop("ties"),
        sketch_bins=final.pop("sketch_bins", FEATURE_DEFAULTS["sketch_bins"]),
        sketch_of=final.pop("sketch_of", None),
        encoding=final.pop("encoding", FEATURE_DEFAULTS["encoding"]),
        fold=final.pop("fold", None),
        html=final.pop("html", False),
        given_features=given,
        method_options=own,
    )


def build_method(options: Any) -> Any:
    """The method of :class:`simdedup.options.FeatureOptions`, a usage error when they do not
    make one (a plugin's own failure stays its own)."""
    try:
        return options.method_object()
    except (PluginError, MissingPackage):  # the plugin's failure, or the installation's: not the command line's
        raise
    except SimdedupError as exc:
        raise click.UsageError(str(exc)) from None


def given_on_command_line(name: str) -> bool:
    from click.core import ParameterSource

    source = click.get_current_context().get_parameter_source(name)
    return source in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def option_flag(name: str) -> str:
    """The command-line flag of the parameter called ``name``."""
    (param,) = [p for p in click.get_current_context().command.params if p.name == name]
    return max(param.opts, key=len)


def _refuse_tokenizer_options(options: dict[str, Any]) -> None:
    from .compat import TOKENIZER_SETTINGS

    for name in (*TOKENIZER_SETTINGS, "html"):
        if given_on_command_line(name):
            raise click.UsageError(f"--features-field gives the features: {option_flag(name)} does not apply")


def _preset_options(compat: str, options: dict[str, Any], given: bool) -> dict[str, Any]:
    """``options`` with those of the ``--compat`` preset. An option given on the command line
    must agree with what the preset fixes, compared as the tokenizer reads them (``-O
    lowercase=no`` agrees with a preset's ``lowercase=false``), the tokenizer's defaults
    included (``--shingle 3`` or ``-O width=3`` would change the fingerprints the preset
    reproduces): else a usage error."""
    from .compat import ADJUSTABLE, PRESETS, TOKENIZER_SETTINGS

    if options["method"] != "simhash":
        raise click.UsageError(
            f"--compat {compat} makes simhash fingerprints; it takes no --method {options['method']}"
        )
    if given:
        _refuse_tokenizer_options(options)
    merged = dict(options)
    for name, value in PRESETS[compat].items():
        if given and name in TOKENIZER_SETTINGS:
            continue
        if name == "tokenizer_options":
            merged[name] = (*value, *options[name])
        elif not given_on_command_line(name):
            merged[name] = value
        elif options[name] != value and name not in ADJUSTABLE:
            raise click.UsageError(
                f"--compat {compat} sets {option_flag(name)} {value}; it cannot be used with {option_flag(name)} {options[name]}"
            )
    if not given:
        _refuse_other_tokenizer_options(compat, options)
    return merged


def _refuse_other_tokenizer_options(compat: str, options: dict[str, Any]) -> None:
    """A usage error for a tokenizer option given beside ``--compat`` (``-O KEY=VALUE``,
    ``--shingle``) whose value, as the preset's tokenizer reads it, is not the one the preset
    gives it (its own, or the tokenizer's default)."""
    from .compat import ADJUSTABLE, PRESETS
    from .errors import SimdedupError
    from .tokenizers import option_value, tokenizer_class

    preset = PRESETS[compat]
    try:
        cls = tokenizer_class(preset["tokenizer_name"])
        fixed = cls(**dict(item.split("=", 1) for item in preset.get("tokenizer_options", ())))
    except SimdedupError:  # the preset's tokenizer cannot load here: building the method says why
        return
    known = {**cls.defaults, **cls.optional}
    given: list[tuple[str, str, Any]] = []
    for item in options["tokenizer_options"]:
        key, _, raw = (part.strip() for part in item.partition("="))
        given.append((key, f"-O {item}", raw))
    if options.get("shingle") is not None and given_on_command_line("shingle"):
        given.append(("shingle", f"--shingle {options['shingle']}", options["shingle"]))
    for key, said, raw in given:
        if key in ADJUSTABLE or key not in known:
            continue  # adjustable, or an option the tokenizer refuses itself
        try:
            value = option_value(key, raw, type(known[key]))
        except SimdedupError:
            continue  # the tokenizer says why
        if value != fixed.option(key):
            shown = str(fixed.option(key)).lower() if isinstance(fixed.option(key), bool) else fixed.option(key)
            raise click.UsageError(
                f"--compat {compat} reproduces its tool with {key}={shown}; it cannot be used with {said}"
            )


@contextmanager
def progress_bar(silent: bool, total: int | None, unit: str) -> Iterator[Any]:
    """A tqdm bar on stderr (in bytes or documents), or None when silent or not on a terminal."""
    if silent or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    from .kernels.load import compile_listeners

    with tqdm(
        total=total, unit=unit, unit_scale=unit == "B", file=sys.stderr, dynamic_ncols=True, desc="fingerprint"
    ) as bar:
        compile_listeners.append(bar.unpause)  # a kernel's compilation is no part of the rate
        try:
            yield bar
        finally:
            compile_listeners.remove(bar.unpause)


def fingerprint_run(
    paths: tuple[str, ...], method: Any, inputs: Any, jobs: int | None, silent: bool, verbose: bool, **options: Any
) -> Any:
    """A :class:`simdedup.run.FingerprintRun` that warns on stderr, and walks the paths first
    when a progress bar will show."""
    from .run import FingerprintRun

    return FingerprintRun(
        paths, method, inputs, jobs, count=not silent and sys.stderr.isatty(), note=message, verbose=verbose, **options
    )


def with_progress(run: Any, silent: bool) -> Iterator[Any]:
    """The batches of a fingerprint run, behind a progress bar (in bytes or documents)."""
    with progress_bar(silent, run.total, run.unit) as bar:
        for batch in run:
            if bar is not None:
                bar.update(batch.size if run.unit == "B" else batch.count + len(batch.skipped))
            yield batch


def end_run(run: Any, records: int, verb: str = "fingerprinted") -> None:
    """Say how many documents were skipped, and exit with :data:`EXIT_SKIPPED` if any were."""
    closing = run.done(records, verb)
    if closing:
        message(closing)
        sys.exit(EXIT_SKIPPED)
