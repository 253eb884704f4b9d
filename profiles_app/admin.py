"""The admin of profile restrictions lives with the accounts it restricts
(:mod:`accounts_app.admin`): only that app knows which accounts are staff."""
