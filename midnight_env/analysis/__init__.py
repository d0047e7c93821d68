"""Every decision of a recorded game judged (``midnight analyze``): :mod:`midnight_env.analysis.judge`."""

from midnight_env.analysis.judge import (
    BLUNDER,
    CHAMPION_BUDGET,
    CLEAR,
    FORMAT,
    INACCURACY,
    MARKS,
    MEASURED_ACCURACY,
    MISTAKE,
    AnalysisError,
    Evaluator,
    GameAnalysis,
    Judged,
    analyze_file,
    analyze_record,
    evaluator_for,
    format_analysis,
    mark_of,
)

__all__ = ["BLUNDER", "CHAMPION_BUDGET", "CLEAR", "FORMAT", "INACCURACY", "MARKS", "MEASURED_ACCURACY", "MISTAKE",
           "AnalysisError", "Evaluator", "GameAnalysis", "Judged", "analyze_file", "analyze_record", "evaluator_for",
           "format_analysis", "mark_of"]
