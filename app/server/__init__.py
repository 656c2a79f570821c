"""The web server's machinery: jobs and their fair queue, quotas, sign-in and sessions, the guard in front of
every route, progress, and finding local model servers. It serves the front ends and the Studio and never
imports a service (`app.services`): what a job runs is handed to it as a function.
"""
