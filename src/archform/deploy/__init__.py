"""Bootstrapping: from a blueprint to a running cluster, phase by phase, resumable.

generate -> pulumi (Automation API, one stack per project, in dependency order) ->
ansible (ansible-runner, site.yml) -> acceptance (validate.yml). State, log and runner
folders live in ``<out>/.archform-deploy/``. pulumi and ansible_runner are imported only
inside the phases that use them.
"""

from archform.deploy.engine import DeployFailed, deploy
from archform.deploy.plan import PHASES, DeployPlan, build_plan

__all__ = ["PHASES", "DeployFailed", "DeployPlan", "build_plan", "deploy"]
