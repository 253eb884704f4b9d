"""``manage.py compile_catalogs``: the translation catalogs (.po) compiled to .mo, no msgfmt."""

from django.conf import settings
from django.core.management.base import BaseCommand

from hermes_explorer.catalogs import catalogs, compile_catalog


class Command(BaseCommand):
    help = "Compile every locale/*/LC_MESSAGES/*.po into its .mo (pure Python, no gettext tools)."

    def handle(self, *args, **options):
        for locale_dir in settings.LOCALE_PATHS:
            for po_path in catalogs(locale_dir):
                mo_path = compile_catalog(po_path)
                if options["verbosity"] > 1:
                    self.stdout.write(f"{po_path} -> {mo_path}")
