"""What a run prints: findings in each format (text, JSON, SARIF, GitHub annotations,
statistics) and the terminal's colour and progress."""
