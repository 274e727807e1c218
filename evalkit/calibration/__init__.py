"""Agreement between raters, judge-versus-human rates, and judge pass rates corrected by human labels."""

from evalkit.calibration._agreement import (
    Agreement,
    Confusion,
    GroupAgreement,
    PairAgreement,
    agreement,
    agreement_from_files,
    format_agreement,
)
from evalkit.calibration._alpha import krippendorff_alpha
from evalkit.calibration._confusion import ConfusionRates, confusion_rates
from evalkit.calibration._items import LabelItem, label_items
from evalkit.calibration._labels import (
    CriterionLabel,
    Label,
    LabelsFile,
    label_item,
    labels_to_ratings,
    read_labels,
    write_labels,
)
from evalkit.calibration._pairwise import cohen_kappa_labels
from evalkit.calibration._ppi import PPIEstimate, ppi_pass_rate
from evalkit.calibration._ratings import read_ratings, write_ratings
from evalkit.calibration._wilson import wilson_interval

__all__ = [
    "Agreement",
    "Confusion",
    "ConfusionRates",
    "CriterionLabel",
    "GroupAgreement",
    "Label",
    "LabelItem",
    "LabelsFile",
    "PPIEstimate",
    "PairAgreement",
    "agreement",
    "agreement_from_files",
    "cohen_kappa_labels",
    "confusion_rates",
    "format_agreement",
    "krippendorff_alpha",
    "label_item",
    "label_items",
    "labels_to_ratings",
    "ppi_pass_rate",
    "read_labels",
    "read_ratings",
    "wilson_interval",
    "write_labels",
    "write_ratings",
]
