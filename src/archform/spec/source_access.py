"""Can the fleet read its registry? The Azure source account, checked at the blueprint line.

On Azure the weights' registry is a storage account the fleet does not create; the stage
Job's workload identity and each cluster's kubelet identity need a data-plane role on it
(Storage Blob Data Reader: https://learn.microsoft.com/azure/storage/blobs/
assign-azure-role-data-access). A role assignment's scope is the account's resource id,
which the blob URL does not carry (it names the account, not its subscription or resource
group), so the blueprint gives it as `model.source_account_id`. Without it the program
has nothing to grant and every replica fails its first read with 403
(AuthorizationPermissionMismatch) long after the clusters are up.

Checked here: present when `source` is an Azure blob URL, of the resource-id form, naming
the same account as the URL; absent elsewhere. Whether the account exists in that
subscription is what only Azure can show (`pulumi preview` fails on the role assignment).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from archform.spec.paths import Loc

ACCOUNT_ID = re.compile(
    r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[^/]+/providers/"
    r"Microsoft\.Storage/storageAccounts/(?P<account>[a-z0-9]{3,24})$",
    re.IGNORECASE,
)
BLOB_HOST = re.compile(r"^(?P<account>[a-z0-9]{3,24})\.blob\.core\.windows\.net$")
ACCOUNT = re.compile(r"^(?P<account>[a-z0-9]{3,24})$")
FORM = "/subscriptions/<id>/resourceGroups/<rg>/providers/Microsoft.Storage/storageAccounts/"

Add = Callable[[Loc, str, str], None]


def blob_account(source: str) -> str | None:
    """The storage account an Azure blob URL (or az://<account>/...) names, else None."""
    parsed = urlparse(source)
    if parsed.scheme == "az":
        match = ACCOUNT.fullmatch(parsed.hostname or "")
    else:
        match = BLOB_HOST.fullmatch(parsed.hostname or "") if parsed.scheme == "https" else None
    return match.group("account") if match else None


def check_source_account(add: Add, fleet: Any) -> None:
    """Report a missing, malformed or mismatched `model.source_account_id`."""
    model = fleet.model
    account = blob_account(str(model.source))
    given = model.source_account_id
    where: Loc = ("model", "source_account_id")
    if account is None:
        if given is not None:
            add(where, "source_account_id applies to an Azure blob `source` only", "remove it")
        return
    if given is None:
        add(
            ("model", "source"),
            f"the fleet cannot read {account}: no model.source_account_id to grant Storage "
            "Blob Data Reader on",
            f"add model.source_account_id: {FORM}{account}",
        )
        return
    match = ACCOUNT_ID.fullmatch(given)
    if match is None:
        add(where, f"{given!r} is not a storage account resource id", f"use {FORM}{account}")
    elif match.group("account").lower() != account:
        add(
            where,
            f"source_account_id names account {match.group('account')}, but model.source is in "
            f"{account}",
            f"use {FORM}{account}",
        )
