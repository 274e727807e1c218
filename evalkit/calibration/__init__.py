"""Agreement between raters, judge-versus-human rates, and judge pass rates corrected by human labels."""

from evalkit._lazy import INTERNAL, attach
from evalkit.calibration._agreement import (
    Agreement,
    Confusion,
    agreement,
    agreement_from_files,
    format_agreement,
)
from evalkit.calibration._alpha import krippendorff_alpha
from evalkit.calibration._calibrate import Calibration, calibrate, corrected_pass_rate, format_calibration
from evalkit.calibration._confusion import confusion_rates
from evalkit.calibration._labels import Label, read_labels, write_labels
from evalkit.calibration._ppi import PPI_MIN_LABELS, PPIEstimate, ppi_pass_rate
from evalkit.calibration._ratings import read_ratings, write_ratings
from evalkit.calibration._record import (
    CalibrationRecord,
    CalibrationState,
    calibration_record,
    calibration_state,
    read_calibration_record,
    write_calibration_record,
)
from evalkit.calibration._sample import ReviewSample, review_items, review_sample, write_review_sample
from evalkit.calibration._trust import judge_trust
from evalkit.calibration._trust_model import JudgeTrust

if INTERNAL:
    from evalkit.calibration._agreement import KAPPA_MIN_ITEMS, GroupAgreement, PairAgreement
    from evalkit.calibration._calibrate import Disagreement, Figures, LabelComparison
    from evalkit.calibration._confusion import ConfusionRates
    from evalkit.calibration._items import LabelItem, label_items
    from evalkit.calibration._join import StaleLabel, UnmatchedLabel
    from evalkit.calibration._labels import CriterionLabel, LabelsFile, label_item, labels_to_ratings
    from evalkit.calibration._pairwise import cohen_kappa_labels
    from evalkit.calibration._sample import allocate
    from evalkit.calibration._trust_model import JudgedCheck, TrustState

__getattr__, __dir__, __all__ = attach(__name__, __file__)
