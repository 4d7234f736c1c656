"""batch/v1 Jobs and CronJobs (upstream ``pkg/apis/batch/validation``: ``ValidateJob``,
``validateJobSpec``, ``ValidateCronJobCreate``), after the Job strategy's selector generation
(``pkg/registry/batch/job/strategy.go``, ``generateSelector``) and the batch/v1 defaults."""

from __future__ import annotations

import re
import zoneinfo
from typing import Any

from ..names import DNS1123_LABEL, check_label_key
from .core import nonnegative
from .field import Errors, Path
from .meta import dns_subdomain, selector_matches, validate_label_selector
from .pods import validate_pod_template_spec
from .values import among, as_int, as_list, as_map, as_str, is_set

__all__ = ["parse_cron", "validate_cron_job", "validate_job"]

#: Stands for the uid the server assigns (a valid label value, as a real uid is).
_UID = "00000000-0000-0000-0000-000000000000"
#: Labels the Job strategy adds to the template: name -> whose value.
_GENERATED = {
    "controller-uid": _UID,
    "batch.kubernetes.io/controller-uid": _UID,
    "job-name": "",
    "batch.kubernetes.io/job-name": "",
}
_FAILURE_ACTIONS = {"Count", "FailIndex", "FailJob", "Ignore"}
_CONDITION_STATUSES = {"True", "False", "Unknown"}
_DOMAIN_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")
_INDEXES = re.compile(r"(\d+(-\d+)?)(,\d+(-\d+)?)*")


def _generated_labels(meta: dict[str, Any], name: str) -> dict[str, Any]:
    """The template labels after ``generateSelector``: the user's, plus the job-name and
    controller-uid labels the user did not set."""
    labels = dict(as_map(meta.get("labels")))
    for key, value in _GENERATED.items():
        labels.setdefault(key, value or name)
    return labels


def _pod_failure_policy(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    # Upstream validatePodFailurePolicy and validatePodFailurePolicyRule.
    rules = as_list(as_map(spec.get("podFailurePolicy")).get("rules"))
    if len(rules) > 20:
        errs.too_many((*path, "rules"), len(rules), 20)
    pod = as_map(as_map(spec.get("template")).get("spec"))
    containers = {
        as_str(as_map(c).get("name"))
        for key in ("containers", "initContainers")
        for c in as_list(pod.get(key))
    }
    for i, rule in enumerate(rules):
        rule, rpath = as_map(rule), (*path, "rules", i)
        action = rule.get("action")
        if not action:
            errs.required(
                (*rpath, "action"), f"valid values: {', '.join(sorted(_FAILURE_ACTIONS))}"
            )
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errs.invalid(
                    (*rpath, "action"), action, "requires the backoffLimitPerIndex to be set"
                )
        elif not among(action, _FAILURE_ACTIONS):
            errs.not_supported((*rpath, "action"), action, _FAILURE_ACTIONS)
        codes, conditions = rule.get("onExitCodes"), as_list(rule.get("onPodConditions"))
        if codes is not None:
            codes, cpath = as_map(codes), (*rpath, "onExitCodes")
            operator = codes.get("operator")
            if not operator:
                errs.required((*cpath, "operator"), "valid values: In, NotIn")
            elif operator not in ("In", "NotIn"):
                errs.not_supported((*cpath, "operator"), operator, ["In", "NotIn"])
            name = codes.get("containerName")
            if name is not None and not among(name, containers):
                errs.invalid(
                    (*cpath, "containerName"),
                    name,
                    "must be one of the container or initContainer names in the pod template",
                )
            values = [v for v in as_list(codes.get("values")) if as_int(v) is not None]
            if not as_list(codes.get("values")):
                errs.invalid((*cpath, "values"), [], "at least one value is required")
            elif len(values) > 255:
                errs.too_many((*cpath, "values"), len(values), 255)
            seen: set[int] = set()
            for j, value in enumerate(values):
                if operator == "In" and value == 0:
                    errs.invalid((*cpath, "values", j), value, "must not be 0 for the In operator")
                if value in seen:
                    errs.duplicate((*cpath, "values", j), value)
                seen.add(value)
            if values != sorted(values):
                errs.invalid((*cpath, "values"), values, "must be ordered")
        if len(conditions) > 20:
            errs.too_many((*rpath, "onPodConditions"), len(conditions), 20)
        for j, pattern in enumerate(conditions):
            pattern, ppath = as_map(pattern), (*rpath, "onPodConditions", j)
            errs.problem((*ppath, "type"), check_label_key(as_str(pattern.get("type"))))
            status = pattern.get("status")
            if not status:
                errs.required((*ppath, "status"), "valid values: False, True, Unknown")
            elif not among(status, _CONDITION_STATUSES):
                errs.not_supported((*ppath, "status"), status, _CONDITION_STATUSES)
        if codes is not None and conditions:
            errs.invalid(
                rpath, "", "specifying both OnExitCodes and OnPodConditions is not supported"
            )
        if codes is None and not conditions:
            errs.invalid(rpath, "", "specifying one of OnExitCodes and OnPodConditions is required")


def _count_indexes(text: str, completions: int) -> int | None:
    # Upstream validateIndexesFormat: "1,3-5", ascending, below completions; how many.
    if not text:
        return 0
    if not _INDEXES.fullmatch(text):
        return None
    total, last = 0, -1
    for part in text.split(","):
        low, _, high = part.partition("-")
        first, final = int(low), int(high or low)
        if first <= last or final < first or final >= completions:
            return None
        total += final - first + 1
        last = final
    return total


def _success_policy(errs: Errors, spec: dict[str, Any], path: Path) -> None:
    # Upstream validateSuccessPolicy and validateSuccessPolicyRule.
    rules = as_list(as_map(spec.get("successPolicy")).get("rules"))
    if not rules:
        errs.required((*path, "rules"), "at least one rule is required when successPolicy is set")
    if len(rules) > 20:
        errs.too_many((*path, "rules"), len(rules), 20)
    completions = as_int(spec.get("completions")) or 0
    for i, rule in enumerate(rules):
        rule, rpath = as_map(rule), (*path, "rules", i)
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            errs.required(
                rpath, "at least one of succeededCount or succeededIndexes must be specified"
            )
        total = 0
        if isinstance(indexes, str):
            found = _count_indexes(indexes, completions)
            if found is None:
                errs.invalid(
                    (*rpath, "succeededIndexes"),
                    indexes,
                    "must be ascending, non-overlapping indexes below completions (e.g. 1,3-5)",
                )
            total = found or 0
        number = as_int(count)
        if number is not None:
            cpath = (*rpath, "succeededCount")
            if number < 0:
                errs.invalid(cpath, number, "must be greater than or equal to 0")
            if number > completions:
                errs.invalid(
                    cpath,
                    number,
                    f"must be less than or equal to {completions} (the "
                    "number of specified completions)",
                )
            if indexes is not None and number > total:
                errs.invalid(
                    cpath,
                    number,
                    f"must be less than or equal to {total} (the number "
                    "of indexes in succeededIndexes)",
                )


def _job_spec(errs: Errors, spec: dict[str, Any], path: Path, template: Any) -> None:
    """Upstream ``validateJobSpec`` (``template``: the pod template after selector generation)."""
    nonnegative(
        errs,
        spec,
        (
            "parallelism",
            "completions",
            "activeDeadlineSeconds",
            "backoffLimit",
            "ttlSecondsAfterFinished",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
        ),
        path,
    )
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        errs.required((*path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified")
    managed = spec.get("managedBy")
    if isinstance(managed, str):
        # Upstream IsDomainPrefixedPath.
        domain, _slash, rest = managed.partition("/")
        if not domain or not rest:
            errs.invalid(
                (*path, "managedBy"),
                managed,
                "must be a domain-prefixed path (such as acme.io/foo)",
            )
        else:
            errs.problem((*path, "managedBy"), dns_subdomain(domain))
            if not _DOMAIN_PATH.fullmatch(rest):
                errs.invalid((*path, "managedBy"), rest, "must be a valid HTTP path")
        if len(managed) > 63:
            errs.too_long((*path, "managedBy"), 63, "characters")
    mode = spec.get("completionMode") or "NonIndexed"
    completions, parallelism = as_int(spec.get("completions")), as_int(spec.get("parallelism"))
    failed = as_int(spec.get("maxFailedIndexes"))
    if mode not in ("NonIndexed", "Indexed"):
        errs.not_supported((*path, "completionMode"), mode, ["Indexed", "NonIndexed"])
    if mode == "Indexed":
        if spec.get("completions") is None:
            errs.required((*path, "completions"), "when completion mode is Indexed")
        if parallelism is not None and parallelism > 100_000:
            errs.invalid(
                (*path, "parallelism"),
                parallelism,
                "must be less than or equal to 100000 when completion mode is Indexed",
            )
        if completions is not None and failed is not None and failed > completions:
            errs.invalid(
                (*path, "maxFailedIndexes"), failed, "must be less than or equal to completions"
            )
        if failed is not None and failed > 100_000:
            errs.invalid(
                (*path, "maxFailedIndexes"), failed, "must be less than or equal to 100000"
            )
        if completions and completions > 100_000 and spec.get("backoffLimitPerIndex") is not None:
            if failed is None:
                errs.required(
                    (*path, "maxFailedIndexes"),
                    "must be specified when completions is above 100000",
                )
            if parallelism is not None and parallelism > 10_000:
                errs.invalid(
                    (*path, "parallelism"),
                    parallelism,
                    "must be at most 10000 when "
                    "completions are above 100000 with a backoff limit per index",
                )
            if failed is not None and failed > 10_000:
                errs.invalid(
                    (*path, "maxFailedIndexes"),
                    failed,
                    "must be at most 10000 when "
                    "completions are above 100000 with a backoff limit per index",
                )
    else:
        for key in ("backoffLimitPerIndex", "maxFailedIndexes"):
            if spec.get(key) is not None:
                errs.invalid((*path, key), spec[key], "requires indexed completion mode")
    if is_set(spec, "podFailurePolicy"):
        _pod_failure_policy(errs, spec, (*path, "podFailurePolicy"))
    if is_set(spec, "successPolicy"):
        if mode != "Indexed":
            errs.invalid(
                (*path, "successPolicy"), spec["successPolicy"], "requires indexed completion mode"
            )
        else:
            _success_policy(errs, spec, (*path, "successPolicy"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        allowed = (
            ["Failed"] if is_set(spec, "podFailurePolicy") else ["Failed", "TerminatingOrFailed"]
        )
        if replacement not in allowed:
            errs.not_supported((*path, "podReplacementPolicy"), replacement, allowed)
    validate_pod_template_spec(errs, template, (*path, "template"))
    restart = as_map(as_map(template).get("spec")).get("restartPolicy") or "Always"
    rpath = (*path, "template", "spec", "restartPolicy")
    if restart == "Always":
        errs.required(rpath, "valid values: OnFailure, Never (a Job's pods end)")
    elif restart not in ("OnFailure", "Never"):
        errs.not_supported(rpath, restart, ["Never", "OnFailure"])
    elif is_set(spec, "podFailurePolicy") and restart != "Never":
        errs.invalid(rpath, restart, "only Never is supported when podFailurePolicy is specified")


def validate_job(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateJob`` after ``generateSelector``: unless ``manualSelector`` is true
    the server writes the selector and the job-name and controller-uid template labels."""
    meta, spec = as_map(obj.get("metadata")), as_map(obj.get("spec"))
    name = as_str(meta.get("name"))
    template = as_map(spec.get("template"))
    tmeta = as_map(template.get("metadata"))
    manual = spec.get("manualSelector") is True
    labels = as_map(tmeta.get("labels")) if manual else _generated_labels(tmeta, name)
    effective = {**template, "metadata": {**tmeta, "labels": labels}}
    mpath = ("spec", "template", "metadata", "labels")
    if not manual:
        # Upstream validateGeneratedSelector.
        for key, value in _GENERATED.items():
            wanted = value or name
            if labels.get(key) != wanted:
                errs.invalid((*mpath, key), labels.get(key), f"must be {wanted!r}")
        if spec.get("selector") is not None:
            expected = {key: value or name for key, value in _GENERATED.items()}
            if not selector_matches(spec["selector"], expected):
                errs.invalid(
                    ("spec", "selector"),
                    spec["selector"],
                    "`selector` not auto-generated: set manualSelector to true to give one",
                )
    _job_spec(errs, spec, ("spec",), effective)
    selector = spec.get("selector")
    if manual:
        if selector is None:
            errs.required(("spec", "selector"))
        elif validate_label_selector(errs, selector, ("spec", "selector")) and not selector_matches(
            selector, labels
        ):
            errs.invalid(
                ("spec", "template", "metadata", "labels"),
                labels,
                "`selector` does not match template `labels`",
            )
    elif selector is not None:
        validate_label_selector(errs, selector, ("spec", "selector"))
    completions = as_int(spec.get("completions"))
    if spec.get("completionMode") == "Indexed" and completions and completions > 0 and name:
        host = f"{name}-{completions - 1}"
        if DNS1123_LABEL.check(host):
            errs.invalid(
                ("metadata", "name"),
                name,
                f"the Job could not create a pod with the invalid DNS label {host!r}",
            )


def _cron_field(text: str, low: int, high: int, names: dict[str, int]) -> str | None:
    # One field of a standard cron spec (robfig/cron v3, as upstream parses schedules).
    for part in text.split(","):
        base, slash, step_text = part.partition("/")
        if slash and (not step_text.isdigit() or int(step_text) == 0):
            return f"{part!r}: the step must be a positive number"
        if base in ("*", "?"):
            continue
        first, dash, last = base.partition("-")
        values = []
        for value in (first, last) if dash else (first,):
            number = names.get(value.lower()) if not value.isdigit() else int(value)
            if number is None:
                return f"{value!r} is not a number or a name"
            if not low <= number <= high:
                return f"{number} is out of range ({low}-{high})"
            values.append(number)
        if len(values) == 2 and values[0] > values[1]:
            return f"{part!r}: the beginning of the range is after its end"
    return None


_MONTHS = {
    m: i
    for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_DESCRIPTORS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_DURATION = re.compile(r"(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+")


def parse_cron(schedule: str) -> str | None:
    """Why ``schedule`` is not a standard cron spec (robfig/cron ``ParseStandard``), or None."""
    text = schedule.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        text = text.partition(" ")[2].strip()
    if text.startswith("@"):
        if text in _DESCRIPTORS:
            return None
        if text.startswith("@every "):
            return (
                None
                if _DURATION.fullmatch(text.removeprefix("@every ").strip())
                else (f"{text!r}: not a duration (e.g. @every 1h30m)")
            )
        return f"unrecognized descriptor {text!r}"
    fields = text.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: {schedule!r}"
    for field, low, high, names in zip(
        fields, (0, 0, 1, 1, 0), (59, 23, 31, 12, 6), ({}, {}, {}, _MONTHS, _DAYS), strict=True
    ):
        if problem := _cron_field(field, low, high, names):
            return problem
    return None


def _time_zone_problem(zone: str) -> str | None:
    # Upstream validateTimeZone (time.LoadLocation, here the system's or tzdata's zones).
    if not zone:
        return "must be nil or a non-empty string"
    if zone.lower() == "local":
        return "must be an explicit time zone as defined in https://www.iana.org/time-zones"
    for part in zone.split("/"):
        if (
            part in (".", "..")
            or part.startswith("-")
            or not re.fullmatch(r"[A-Za-z.\-_0-9+]{1,14}", part)
        ):
            return f"unknown time zone {zone}"
    if not zoneinfo.available_timezones():
        return None  # no time zone database on this machine: the zone cannot be checked
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {zone}"
    return None


def validate_cron_job(errs: Errors, obj: dict[str, Any]) -> None:
    """Upstream ``ValidateCronJobCreate``: a name the controller can suffix (at most 52
    characters), a schedule, and a job template without a selector."""
    name = as_str(as_map(obj.get("metadata")).get("name"))
    if len(name) > 52:
        errs.invalid(
            ("metadata", "name"),
            name,
            "must be no more than 52 characters (the "
            "controller appends an 11-character suffix to name its Jobs)",
        )
    spec = as_map(obj.get("spec"))
    schedule = as_str(spec.get("schedule"))
    if not schedule:
        errs.required(("spec", "schedule"))
    else:
        errs.problem(("spec", "schedule"), parse_cron(schedule))
        if "TZ" in schedule:
            errs.invalid(
                ("spec", "schedule"),
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            )
    nonnegative(
        errs,
        spec,
        ("startingDeadlineSeconds", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"),
        ("spec",),
    )
    zone = spec.get("timeZone")
    if isinstance(zone, str) and (problem := _time_zone_problem(zone)):
        errs.invalid(("spec", "timeZone"), zone, problem)
    policy = spec.get("concurrencyPolicy") or "Allow"
    if policy not in ("Allow", "Forbid", "Replace"):
        errs.not_supported(("spec", "concurrencyPolicy"), policy, ["Allow", "Forbid", "Replace"])
    job = as_map(as_map(spec.get("jobTemplate")).get("spec"))
    path = ("spec", "jobTemplate", "spec")
    _job_spec(errs, job, path, job.get("template"))
    if job.get("selector") is not None:
        errs.invalid((*path, "selector"), job["selector"], "`selector` will be auto-generated")
    if job.get("manualSelector") is True:
        errs.not_supported((*path, "manualSelector"), True, ["false", "nil"])
