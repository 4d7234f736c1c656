"""One Pulumi operation on a kubetrain project, in a process of its own (see harness.pulumistack).

    python pulumi_run.py up --project DIR --stack ENV [--refresh] [--expect-no-changes]

Prints the operation's engine output, then one line `KUBETRAIN-E2E-RESULT {json}` with its
summary (resource changes, outputs, the plan of a preview). Exit 0 when the operation
succeeded, 1 when Pulumi reported a failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pulumi import automation as auto


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("op", choices=["preview", "up", "refresh", "destroy", "export", "init"])
    parser.add_argument("--project", required=True, type=Path)
    parser.add_argument("--stack", required=True)
    parser.add_argument("--refresh", action="store_true")
    parser.add_argument("--expect-no-changes", action="store_true")
    args = parser.parse_args()
    project: Path = args.project.resolve()

    def program() -> None:
        from components.program import main as kubetrain_program

        kubetrain_program(project / "stacks")

    # For an inline program the work_dir keyword is ignored: the folder goes in the options.
    stack = auto.create_or_select_stack(
        stack_name=args.stack,
        project_name="kubetrain",
        program=program,
        opts=auto.LocalWorkspaceOptions(work_dir=str(project)),
    )
    out = sys.stdout.write
    summary: dict = {}
    try:
        if args.op == "init":
            summary = {"stack": stack.name}
        elif args.op == "preview":
            result = stack.preview(
                on_output=out,
                refresh=args.refresh,
                expect_no_changes=args.expect_no_changes,
                diff=True,
            )
            summary = {"resource_changes": result.change_summary}
        elif args.op == "up":
            result = stack.up(
                on_output=out,
                refresh=args.refresh,
                expect_no_changes=args.expect_no_changes,
                diff=True,
            )
            summary = {
                "resource_changes": result.summary.resource_changes,
                "result": result.summary.result,
                "outputs": {k: v.value for k, v in result.outputs.items() if not v.secret},
            }
        elif args.op == "refresh":
            result = stack.refresh(on_output=out, expect_no_changes=args.expect_no_changes)
            summary = {
                "resource_changes": result.summary.resource_changes,
                "result": result.summary.result,
            }
        elif args.op == "destroy":
            result = stack.destroy(on_output=out)
            summary = {
                "resource_changes": result.summary.resource_changes,
                "result": result.summary.result,
            }
        elif args.op == "export":
            summary = {"deployment": stack.export_stack().deployment}
    except auto.CommandError as exc:
        print(f"\nKUBETRAIN-E2E-RESULT {json.dumps({'error': str(exc)[-4000:]})}")
        return 1
    print(f"\nKUBETRAIN-E2E-RESULT {json.dumps(summary, default=str)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
