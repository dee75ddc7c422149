"""The questionnaires app's admin: each registered kind registers its own (its `admin`
module, questionnaires.registry), and the analytics' card definitions."""

from __future__ import annotations

from django.contrib import admin

from questionnaires import registry
from questionnaires.analytics.admin import CardDefinitionAdmin
from questionnaires.analytics.models import CardDefinition
from questionnaires.repair.admin import RepairAdmin
from questionnaires.repair.models import Repair

registry.admin_register()
admin.site.register(CardDefinition, CardDefinitionAdmin)
admin.site.register(Repair, RepairAdmin)  # conversation repair (issue 36)
