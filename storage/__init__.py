"""What a project is and how it is kept: schema, SQLite database, media store, archives. Imports nothing of ours."""
