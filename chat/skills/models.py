"""Published skills (spec 003)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Skill(models.Model):
    """A published skill (spec 003): SKILL.md plus an optional files archive."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skills"
    )
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    version = models.CharField(max_length=40, default="1.0.0")
    skill_md = models.TextField(blank=True)
    archive = models.FileField(upload_to="skills/", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("skill")
        verbose_name_plural = _("skills")
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="skill_owner_name_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}"
