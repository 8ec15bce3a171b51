`default_nettype none
// tt_sce: the softmax cross-entropy gradient unit (SPEC 5.4), one sample per op, bit-exact to
// golden.semantics.sce_gradient (golden/isa/sce.py SceDesc, execute_sce). For logits z[0 .. n_out-1] (signed Z_W-bit
// words, frac_z fraction bits), the first `classes` of them used, and the label:
//   d_j = zmax - z_j; t_j = floor(d_j * 5909 / 2^(frac_z + 4)) (a left shift if frac_z + 4 < 0)
//   E_j = EXP2[t_j mod 256] >> floor(t_j / 256), 0 if floor(t_j / 256) >= 16; S = sum E_j; R = floor(2^31 / S)
//   p_j = floor(E_j R / 2^(31 - err_frac)); e_j = SAT_err_w(p_j - (j == label ? 2^err_frac : 0))   j < classes
//   e_j = 0                                                                                      classes <= j < n_out
// pred = the first index of the largest of z[0 .. classes-1]; p_label = p[label] (the host's loss); sat_count =
// the elements of this op that saturated (at most n_out: the 32-bit counter cannot wrap). No random draws.
//
// Three passes over the logits, one read issued per cycle: MAX (z[0 .. classes-1]: zmax and pred), SUM (the same
// words again: E_j summed into S), a restoring divider (R, 17 quotient bits, one per cycle: S >= EXP2[0] = 2^15 so
// R <= 2^16 and the 14 higher quotient bits are 0), then OUT (index 0 .. n_out-1: z re-read for j < classes, E_j
// recomputed, e_j written at e_base + j; the padded j >= classes are not read and write 0). Nothing is stored per
// element. E_j is never above S, so E_j R <= 2^31 fits 32 bits.
//
// Memories are outside, as in tt_contract / tt_ewise: one synchronous read port of fixed latency MEM_LAT (address
// and rd_en in cycle c, signed data in cycle c + MEM_LAT), one write port (taken at the end of the cycle o_wr_en
// is high). e may be z itself or lie below or apart from it (a write only ever goes to an address the OUT pass has
// already read); e above z and overlapping it is not supported (golden.lowering.lower_sce rejects it). Descriptor ports
// must be held stable from start until done.
//
// Timing (no stalls), C = classes, N = n_out, L = MEM_LAT: start in cycle 0, the descriptor check in cycle 1
// (tt_op_ctrl); MAX reads in cycles 2 .. C+1, SUM reads in C+2 .. 2C+1, the last sum in cycle 2C+L+7, the
// divider in 2C+L+8 .. 2C+L+24, OUT reads (or pads) in 2C+L+25 .. 2C+L+N+24, element j's write on the port in
// cycle 2C+2L+35+j, done (and busy low) from cycle
//   2 C + N + 2 L + 35
// until the next start. OUT pipeline: read -> L -> d -> d * 5909 -> t -> EXP2 ROM (registered read) -> register
// -> shift
// -> E R -> align -> subtract -> saturate -> registered write.
//
// Errors are found in the check cycle, before any memory access, so an illegal op leaves the memory untouched:
// done and error rise the cycle after it with error_code (the lowest that applies; golden.isa.sce.sce_error is the
// reference)
//   1 n_out 0, classes 0 or classes > n_out; 2 label >= classes; 3 err_w outside 2..OUT_W;
//   4 frac_z outside -32..47 (fxp.Fmt's fraction range) or err_frac above 31.
// p_label and sat_count are cleared by the start of a legal op and pred is set by its MAX pass; an illegal op
// leaves them as they were. A start while busy is ignored.
module tt_sce #(
  parameter integer ADDR_W  = 20,  // word address width, 8..32
  parameter integer Z_W     = 16,  // logit word width, signed, 2..32
  parameter integer OUT_W   = 16,  // error word width (the widest err_w), 2..32
  parameter integer MEM_LAT = 1,   // read latency of the memory port, 1..8
  parameter integer N_W     = 8    // n_out, classes, label and pred width: at most 2^N_W - 1 outputs, 1..16
) (
  input  wire              clk,
  input  wire              rst,
  // op descriptor (golden.isa.sce.pack_sce_ports)
  input  wire              start,
  input  wire [ADDR_W-1:0] z_base,
  input  wire [ADDR_W-1:0] e_base,
  input  wire [N_W-1:0]    n_out,      // outputs (logits read, errors written)
  input  wire [N_W-1:0]    classes,    // used classes, 1..n_out
  input  wire [N_W-1:0]    label,      // 0..classes-1
  input  wire [6:0]        frac_z,     // signed: fraction bits of the logits
  input  wire [5:0]        err_w,      // error format: width 2..OUT_W, fraction bits 0..31
  input  wire [5:0]        err_frac,
  // status and results
  output wire              busy,
  output wire              done,
  output wire              error,
  output wire [3:0]        error_code,
  output wire [31:0]       sat_count,  // this op's saturated elements
  output wire [N_W-1:0]    pred,       // argmax of z[0 .. classes-1], the first of equal maxima
  output wire [31:0]       p_label,    // p[label], err_frac fraction bits (<= 2^err_frac)
  // memory ports
  output wire              z_rd_en,
  output wire [ADDR_W-1:0] z_rd_addr,
  input  wire [Z_W-1:0]    z_rd_data,
  output wire              o_wr_en,
  output wire [ADDR_W-1:0] o_wr_addr,
  output wire [OUT_W-1:0]  o_wr_data
);

  localparam integer M_W = Z_W + 13;  // d * 5909: d < 2^Z_W, 5909 < 2^13
  localparam integer TW_W = M_W + 12;  // d * 5909 * 2^12, so one right shift covers both shift directions
  localparam integer S_W = N_W + 15;  // S: up to 2^N_W - 1 terms of at most 2^15
  localparam integer Q_W = 17;  // R = floor(2^31 / S) <= 2^16
  localparam integer TAG_W = N_W + 4;  // {index, last, pad, phase} of a read
  localparam [12:0] LOG2E_Q12 = 13'd5909;  // round(log2(e) * 2^12)
  localparam [1:0] PH_NONE = 2'd0;
  localparam [1:0] PH_MAX = 2'd1;
  localparam [1:0] PH_SUM = 2'd2;
  localparam [1:0] PH_OUT = 2'd3;
  localparam [4:0] DIV_STEPS = 5'd17;
`include "tt_arch.vh"  // ERR_NONE, SCE_ERR_*
  localparam [31:0] OUT_W_U = OUT_W;

  // Elaboration-time parameter checks (a missing module stops both Icarus 11 and Verilator).
  generate
    if (ADDR_W < 8 || ADDR_W > 32) begin : g_bad_addr_w
      error_tt_sce_ADDR_W_must_be_8_to_32 u_error ();
    end
    if (Z_W < 2 || Z_W > 32) begin : g_bad_z_w
      error_tt_sce_Z_W_must_be_2_to_32 u_error ();
    end
    if (OUT_W < 2 || OUT_W > 32) begin : g_bad_out_w
      error_tt_sce_OUT_W_must_be_2_to_32 u_error ();
    end
    if (MEM_LAT < 1 || MEM_LAT > 8) begin : g_bad_mem_lat
      error_tt_sce_MEM_LAT_must_be_1_to_8 u_error ();
    end
    if (N_W < 1 || N_W > 16 || N_W > ADDR_W) begin : g_bad_n_w
      error_tt_sce_N_W_must_be_1_to_16_and_at_most_ADDR_W u_error ();
    end
  endgenerate

  // ---- legality check (registered at start, tt_op_ctrl), busy / done / error ----
  wire signed [6:0] frac_z_s = frac_z;
  wire bad_count = (n_out == {N_W{1'b0}}) || (classes == {N_W{1'b0}}) || (classes > n_out);
  wire bad_label = label >= classes;
  wire bad_width = (err_w < 6'd2) || ({26'd0, err_w} > OUT_W_U);
  wire bad_frac  = (frac_z_s < -7'sd32) || (frac_z_s > 7'sd47) || (err_frac > 6'd31);
  wire [3:0] err_d = bad_count ? SCE_ERR_COUNT :
                     bad_label ? SCE_ERR_LABEL :
                     bad_width ? SCE_ERR_WIDTH :
                     bad_frac  ? SCE_ERR_FRAC : ERR_NONE;

  reg       fin_q;  // the last write is on the port this cycle
  wire      run;
  wire [3:0] err_q;

  tt_op_ctrl u_ctrl (
    .clk        (clk),
    .rst        (rst),
    .start      (start),
    .err_d      (err_d),
    .fin        (fin_q),
    .run        (run),
    .busy       (busy),
    .done       (done),
    .error_code (err_q)
  );

  // ---- divider state (used by the issue control to start the OUT pass) ----
  reg [4:0]     div_cnt_q;  // quotient bits still to find
  reg [S_W-1:0] rem_q;
  reg [Q_W-1:0] quo_q;

  // ---- issue: MAX over classes words, SUM over them again, then (after the divider) OUT over n_out ----
  reg  [1:0]     iss_ph_q;
  reg  [N_W-1:0] iss_idx_q;
  wire [N_W-1:0] iss_count = (iss_ph_q == PH_OUT) ? n_out : classes;
  wire           iss_last = iss_idx_q == iss_count - {{(N_W-1){1'b0}}, 1'b1};
  wire           iss_pad = iss_idx_q >= classes;  // OUT only: a padded output, not read

  always @(posedge clk) begin
    if (rst) begin
      iss_ph_q <= PH_NONE;
    end else if (run) begin
      iss_ph_q <= PH_MAX;
    end else if (div_cnt_q == 5'd1) begin
      iss_ph_q <= PH_OUT;
    end else if (iss_ph_q != PH_NONE && iss_last) begin
      iss_ph_q <= (iss_ph_q == PH_MAX) ? PH_SUM : PH_NONE;
    end
  end

  always @(posedge clk) begin
    if (run || div_cnt_q == 5'd1 || iss_last) begin
      iss_idx_q <= {N_W{1'b0}};
    end else begin
      iss_idx_q <= iss_idx_q + {{(N_W-1){1'b0}}, 1'b1};
    end
  end

  assign z_rd_en   = (iss_ph_q != PH_NONE) && !iss_pad;
  assign z_rd_addr = z_base + {{(ADDR_W-N_W){1'b0}}, iss_idx_q};

  // ---- read tags through the memory latency: the phase and flags reset, the index not (it counts only in a
  // phase) ----
  wire [TAG_W-1:0] tag_issue = {iss_idx_q, iss_last, iss_pad, iss_ph_q};
  wire [TAG_W-1:0] tag_m;
  tt_delay #(
    .WIDTH (4),
    .DEPTH (MEM_LAT),
    .RESET (1)
  ) u_mem_tag (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue[3:0]),
    .q   (tag_m[3:0])
  );
  tt_delay #(
    .WIDTH (TAG_W - 4),
    .DEPTH (MEM_LAT)
  ) u_mem_idx (
    .clk (clk),
    .rst (rst),
    .d   (tag_issue[TAG_W-1:4]),
    .q   (tag_m[TAG_W-1:4])
  );
  wire [1:0]       m_ph   = tag_m[1:0];
  wire             m_pad  = tag_m[2];
  wire             m_last = tag_m[3];
  wire [N_W-1:0]   m_idx  = tag_m[TAG_W-1:4];

  // ---- stage M: the MAX pass keeps zmax and its first index; SUM and OUT form d * 5909 ----
  wire signed [Z_W-1:0] zd = z_rd_data;
  reg  signed [Z_W-1:0] zmax_q;
  reg         [N_W-1:0] pred_q;
  always @(posedge clk) begin
    if (m_ph == PH_MAX && (m_idx == {N_W{1'b0}} || zd > zmax_q)) begin  // strict: the first maximum wins
      zmax_q <= zd;
      pred_q <= m_idx;
    end
  end

  // zmax - z is in 0 .. 2^Z_W - 1 for the words of the pass (pads carry junk and are zeroed in stage 1)
  wire [Z_W:0]   d_full = {zmax_q[Z_W-1], zmax_q} - {zd[Z_W-1], zd};
  wire [Z_W-1:0] d = d_full[Z_W-1:0];
  wire           unused_d_sign = d_full[Z_W];

  // ---- stage D: d registered, so the multiplier's input comes from a register, not from the banks ----
  reg [1:0]     s0_ph_q;
  reg           s0_pad_q;
  reg           s0_last_q;
  reg [N_W-1:0] s0_idx_q;
  reg [Z_W-1:0] d_q;
  always @(posedge clk) begin
    if (rst) begin
      s0_ph_q <= PH_NONE;
    end else begin
      s0_ph_q <= (m_ph == PH_MAX) ? PH_NONE : m_ph;
    end
    s0_pad_q  <= m_pad;
    s0_last_q <= m_last;
    s0_idx_q  <= m_idx;
    d_q       <= d;
  end
  wire [M_W-1:0] m_d = d_q * LOG2E_Q12;

  reg [1:0]     s1_ph_q;
  reg           s1_pad_q;
  reg           s1_last_q;
  reg [N_W-1:0] s1_idx_q;
  reg [M_W-1:0] m_q;
  always @(posedge clk) begin
    if (rst) begin
      s1_ph_q <= PH_NONE;
    end else begin
      s1_ph_q <= s0_ph_q;
    end
    s1_pad_q  <= s0_pad_q;
    s1_last_q <= s0_last_q;
    s1_idx_q  <= s0_idx_q;
    m_q       <= m_d;
  end

  // ---- stage 1: t = m / 2^(frac_z + 4) as (m * 2^12) >> (frac_z + 16) ----
  reg signed [7:0]   sr_q;  // a descriptor constant, registered (stable from start)
  always @(posedge clk) begin
    sr_q <= {frac_z_s[6], frac_z_s} + 8'sd16;
  end
  wire [TW_W-1:0]    tw = {m_q, 12'd0} >> sr_q[6:0];
  // sr < 0 (frac_z < -16): a left shift by 13 or more, so t >= 4096 unless m = 0 (then t = 0)
  wire               t_big = sr_q[7] ? (m_q != {M_W{1'b0}}) : (tw[TW_W-1:12] != {(TW_W-12){1'b0}});
  wire [11:0]        t12 = sr_q[7] ? 12'd0 : tw[11:0];

  reg [1:0]     st_ph_q;
  reg           st_last_q;
  reg [N_W-1:0] st_idx_q;
  reg           st_zero_q;  // E is 0: a padded output, or t / 256 >= 16
  reg [11:0]    t_q;
  always @(posedge clk) begin
    if (rst) begin
      st_ph_q <= PH_NONE;
    end else begin
      st_ph_q <= s1_ph_q;
    end
    st_last_q <= s1_last_q;
    st_idx_q  <= s1_idx_q;
    st_zero_q <= s1_pad_q || t_big;
    t_q       <= t12;
  end

  // ---- stage T: the EXP2 ROM, read into a register (a block RAM where the part has one) ----
  reg  [15:0]        rom;
  always @* begin
    case (t_q[7:0])
      8'd0: rom = 16'd32768;  8'd1: rom = 16'd32679;  8'd2: rom = 16'd32591;  8'd3: rom = 16'd32503;
      8'd4: rom = 16'd32415;  8'd5: rom = 16'd32327;  8'd6: rom = 16'd32240;  8'd7: rom = 16'd32153;
      8'd8: rom = 16'd32066;  8'd9: rom = 16'd31979;  8'd10: rom = 16'd31893;  8'd11: rom = 16'd31806;
      8'd12: rom = 16'd31720;  8'd13: rom = 16'd31635;  8'd14: rom = 16'd31549;  8'd15: rom = 16'd31464;
      8'd16: rom = 16'd31379;  8'd17: rom = 16'd31294;  8'd18: rom = 16'd31209;  8'd19: rom = 16'd31125;
      8'd20: rom = 16'd31041;  8'd21: rom = 16'd30957;  8'd22: rom = 16'd30873;  8'd23: rom = 16'd30790;
      8'd24: rom = 16'd30706;  8'd25: rom = 16'd30623;  8'd26: rom = 16'd30541;  8'd27: rom = 16'd30458;
      8'd28: rom = 16'd30376;  8'd29: rom = 16'd30293;  8'd30: rom = 16'd30212;  8'd31: rom = 16'd30130;
      8'd32: rom = 16'd30048;  8'd33: rom = 16'd29967;  8'd34: rom = 16'd29886;  8'd35: rom = 16'd29805;
      8'd36: rom = 16'd29725;  8'd37: rom = 16'd29644;  8'd38: rom = 16'd29564;  8'd39: rom = 16'd29484;
      8'd40: rom = 16'd29405;  8'd41: rom = 16'd29325;  8'd42: rom = 16'd29246;  8'd43: rom = 16'd29167;
      8'd44: rom = 16'd29088;  8'd45: rom = 16'd29009;  8'd46: rom = 16'd28931;  8'd47: rom = 16'd28852;
      8'd48: rom = 16'd28774;  8'd49: rom = 16'd28697;  8'd50: rom = 16'd28619;  8'd51: rom = 16'd28542;
      8'd52: rom = 16'd28464;  8'd53: rom = 16'd28388;  8'd54: rom = 16'd28311;  8'd55: rom = 16'd28234;
      8'd56: rom = 16'd28158;  8'd57: rom = 16'd28082;  8'd58: rom = 16'd28006;  8'd59: rom = 16'd27930;
      8'd60: rom = 16'd27855;  8'd61: rom = 16'd27779;  8'd62: rom = 16'd27704;  8'd63: rom = 16'd27629;
      8'd64: rom = 16'd27554;  8'd65: rom = 16'd27480;  8'd66: rom = 16'd27406;  8'd67: rom = 16'd27332;
      8'd68: rom = 16'd27258;  8'd69: rom = 16'd27184;  8'd70: rom = 16'd27110;  8'd71: rom = 16'd27037;
      8'd72: rom = 16'd26964;  8'd73: rom = 16'd26891;  8'd74: rom = 16'd26818;  8'd75: rom = 16'd26746;
      8'd76: rom = 16'd26674;  8'd77: rom = 16'd26601;  8'd78: rom = 16'd26530;  8'd79: rom = 16'd26458;
      8'd80: rom = 16'd26386;  8'd81: rom = 16'd26315;  8'd82: rom = 16'd26244;  8'd83: rom = 16'd26173;
      8'd84: rom = 16'd26102;  8'd85: rom = 16'd26031;  8'd86: rom = 16'd25961;  8'd87: rom = 16'd25891;
      8'd88: rom = 16'd25821;  8'd89: rom = 16'd25751;  8'd90: rom = 16'd25681;  8'd91: rom = 16'd25612;
      8'd92: rom = 16'd25543;  8'd93: rom = 16'd25474;  8'd94: rom = 16'd25405;  8'd95: rom = 16'd25336;
      8'd96: rom = 16'd25268;  8'd97: rom = 16'd25199;  8'd98: rom = 16'd25131;  8'd99: rom = 16'd25063;
      8'd100: rom = 16'd24995;  8'd101: rom = 16'd24928;  8'd102: rom = 16'd24860;  8'd103: rom = 16'd24793;
      8'd104: rom = 16'd24726;  8'd105: rom = 16'd24659;  8'd106: rom = 16'd24593;  8'd107: rom = 16'd24526;
      8'd108: rom = 16'd24460;  8'd109: rom = 16'd24394;  8'd110: rom = 16'd24328;  8'd111: rom = 16'd24262;
      8'd112: rom = 16'd24196;  8'd113: rom = 16'd24131;  8'd114: rom = 16'd24066;  8'd115: rom = 16'd24001;
      8'd116: rom = 16'd23936;  8'd117: rom = 16'd23871;  8'd118: rom = 16'd23806;  8'd119: rom = 16'd23742;
      8'd120: rom = 16'd23678;  8'd121: rom = 16'd23614;  8'd122: rom = 16'd23550;  8'd123: rom = 16'd23486;
      8'd124: rom = 16'd23423;  8'd125: rom = 16'd23359;  8'd126: rom = 16'd23296;  8'd127: rom = 16'd23233;
      8'd128: rom = 16'd23170;  8'd129: rom = 16'd23108;  8'd130: rom = 16'd23045;  8'd131: rom = 16'd22983;
      8'd132: rom = 16'd22921;  8'd133: rom = 16'd22859;  8'd134: rom = 16'd22797;  8'd135: rom = 16'd22735;
      8'd136: rom = 16'd22674;  8'd137: rom = 16'd22613;  8'd138: rom = 16'd22552;  8'd139: rom = 16'd22491;
      8'd140: rom = 16'd22430;  8'd141: rom = 16'd22369;  8'd142: rom = 16'd22309;  8'd143: rom = 16'd22248;
      8'd144: rom = 16'd22188;  8'd145: rom = 16'd22128;  8'd146: rom = 16'd22068;  8'd147: rom = 16'd22009;
      8'd148: rom = 16'd21949;  8'd149: rom = 16'd21890;  8'd150: rom = 16'd21831;  8'd151: rom = 16'd21772;
      8'd152: rom = 16'd21713;  8'd153: rom = 16'd21654;  8'd154: rom = 16'd21595;  8'd155: rom = 16'd21537;
      8'd156: rom = 16'd21479;  8'd157: rom = 16'd21421;  8'd158: rom = 16'd21363;  8'd159: rom = 16'd21305;
      8'd160: rom = 16'd21247;  8'd161: rom = 16'd21190;  8'd162: rom = 16'd21133;  8'd163: rom = 16'd21076;
      8'd164: rom = 16'd21019;  8'd165: rom = 16'd20962;  8'd166: rom = 16'd20905;  8'd167: rom = 16'd20849;
      8'd168: rom = 16'd20792;  8'd169: rom = 16'd20736;  8'd170: rom = 16'd20680;  8'd171: rom = 16'd20624;
      8'd172: rom = 16'd20568;  8'd173: rom = 16'd20513;  8'd174: rom = 16'd20457;  8'd175: rom = 16'd20402;
      8'd176: rom = 16'd20347;  8'd177: rom = 16'd20292;  8'd178: rom = 16'd20237;  8'd179: rom = 16'd20182;
      8'd180: rom = 16'd20127;  8'd181: rom = 16'd20073;  8'd182: rom = 16'd20019;  8'd183: rom = 16'd19965;
      8'd184: rom = 16'd19911;  8'd185: rom = 16'd19857;  8'd186: rom = 16'd19803;  8'd187: rom = 16'd19750;
      8'd188: rom = 16'd19696;  8'd189: rom = 16'd19643;  8'd190: rom = 16'd19590;  8'd191: rom = 16'd19537;
      8'd192: rom = 16'd19484;  8'd193: rom = 16'd19431;  8'd194: rom = 16'd19379;  8'd195: rom = 16'd19326;
      8'd196: rom = 16'd19274;  8'd197: rom = 16'd19222;  8'd198: rom = 16'd19170;  8'd199: rom = 16'd19118;
      8'd200: rom = 16'd19066;  8'd201: rom = 16'd19015;  8'd202: rom = 16'd18963;  8'd203: rom = 16'd18912;
      8'd204: rom = 16'd18861;  8'd205: rom = 16'd18810;  8'd206: rom = 16'd18759;  8'd207: rom = 16'd18708;
      8'd208: rom = 16'd18658;  8'd209: rom = 16'd18607;  8'd210: rom = 16'd18557;  8'd211: rom = 16'd18507;
      8'd212: rom = 16'd18457;  8'd213: rom = 16'd18407;  8'd214: rom = 16'd18357;  8'd215: rom = 16'd18308;
      8'd216: rom = 16'd18258;  8'd217: rom = 16'd18209;  8'd218: rom = 16'd18160;  8'd219: rom = 16'd18110;
      8'd220: rom = 16'd18061;  8'd221: rom = 16'd18013;  8'd222: rom = 16'd17964;  8'd223: rom = 16'd17915;
      8'd224: rom = 16'd17867;  8'd225: rom = 16'd17819;  8'd226: rom = 16'd17770;  8'd227: rom = 16'd17722;
      8'd228: rom = 16'd17674;  8'd229: rom = 16'd17627;  8'd230: rom = 16'd17579;  8'd231: rom = 16'd17531;
      8'd232: rom = 16'd17484;  8'd233: rom = 16'd17437;  8'd234: rom = 16'd17390;  8'd235: rom = 16'd17343;
      8'd236: rom = 16'd17296;  8'd237: rom = 16'd17249;  8'd238: rom = 16'd17202;  8'd239: rom = 16'd17156;
      8'd240: rom = 16'd17109;  8'd241: rom = 16'd17063;  8'd242: rom = 16'd17017;  8'd243: rom = 16'd16971;
      8'd244: rom = 16'd16925;  8'd245: rom = 16'd16879;  8'd246: rom = 16'd16834;  8'd247: rom = 16'd16788;
      8'd248: rom = 16'd16743;  8'd249: rom = 16'd16697;  8'd250: rom = 16'd16652;  8'd251: rom = 16'd16607;
      8'd252: rom = 16'd16562;  8'd253: rom = 16'd16518;  8'd254: rom = 16'd16473;  8'd255: rom = 16'd16428;
      default: rom = 16'd0;  // every index is listed above
    endcase
  end

  reg [1:0]     sr_ph_q;
  reg           sr_last_q;
  reg [N_W-1:0] sr_idx_q;
  reg           sr_zero_q;
  reg [3:0]     sr_sh_q;
  reg [15:0]    rom_q;
  always @(posedge clk) begin
    if (rst) begin
      sr_ph_q <= PH_NONE;
    end else begin
      sr_ph_q <= st_ph_q;
    end
    sr_last_q <= st_last_q;
    sr_idx_q  <= st_idx_q;
    sr_zero_q <= st_zero_q;
    sr_sh_q   <= t_q[11:8];
    rom_q     <= rom;
  end

  // ---- stage X: the ROM word leaves its block RAM through a flip-flop (a block RAM's read has a slow clock-to-out) ----
  reg  [15:0]    rom_x_q;
  wire [1:0]     sx_ph;
  wire           sx_last;
  wire [N_W-1:0] sx_idx;
  wire           sx_zero;
  wire [3:0]     sx_sh;
  always @(posedge clk) begin
    rom_x_q <= rom_q;
  end
  tt_delay #(
    .WIDTH (2),
    .DEPTH (1),
    .RESET (1)
  ) u_sx_ph (
    .clk (clk),
    .rst (rst),
    .d   (sr_ph_q),
    .q   (sx_ph)
  );
  tt_delay #(
    .WIDTH (N_W + 6),
    .DEPTH (1)
  ) u_sx_tags (
    .clk (clk),
    .rst (rst),
    .d   ({sr_last_q, sr_idx_q, sr_zero_q, sr_sh_q}),
    .q   ({sx_last, sx_idx, sx_zero, sx_sh})
  );

  // ---- stage R: E = EXP2[t mod 256] >> t / 256 ----
  wire [15:0] e_d = sx_zero ? 16'd0 : (rom_x_q >> sx_sh);

  reg [1:0]     s2_ph_q;
  reg           s2_last_q;
  reg [N_W-1:0] s2_idx_q;
  reg [15:0]    e_q;
  always @(posedge clk) begin
    if (rst) begin
      s2_ph_q <= PH_NONE;
    end else begin
      s2_ph_q <= sx_ph;
    end
    s2_last_q <= sx_last;
    s2_idx_q  <= sx_idx;
    e_q       <= e_d;
  end

  // ---- stage 2: SUM accumulates S and starts the divider after its last term; OUT forms E R ----
  reg [S_W-1:0] s_q;
  always @(posedge clk) begin
    if (run) begin
      s_q <= {S_W{1'b0}};
    end else if (s2_ph_q == PH_SUM) begin
      s_q <= s_q + {{(S_W-16){1'b0}}, e_q};
    end
  end

  // Restoring division of 2^31 by S, quotient bits 16 .. 0: the partial remainder after the numerator's bits
  // 31 .. 17 is 2^14 (< S), and every later numerator bit is 0.
  wire [S_W:0] rem_2 = {rem_q, 1'b0};
  wire [S_W:0] rem_sub = rem_2 - {1'b0, s_q};
  wire         q_bit = rem_2 >= {1'b0, s_q};
  wire         unused_rem_sub_top = rem_sub[S_W];  // 0 when taken: the remainder stays below S
  always @(posedge clk) begin
    if (rst) begin
      div_cnt_q <= 5'd0;
    end else if (s2_ph_q == PH_SUM && s2_last_q) begin
      div_cnt_q <= DIV_STEPS;
    end else if (div_cnt_q != 5'd0) begin
      div_cnt_q <= div_cnt_q - 5'd1;
    end
    if (s2_ph_q == PH_SUM && s2_last_q) begin
      rem_q <= {{(S_W-15){1'b0}}, 15'h4000};
      quo_q <= {Q_W{1'b0}};
    end else if (div_cnt_q != 5'd0) begin
      rem_q <= q_bit ? rem_sub[S_W-1:0] : rem_2[S_W-1:0];
      quo_q <= {quo_q[Q_W-2:0], q_bit};
    end
  end

  wire [32:0] prod_d = e_q * quo_q;  // <= 2^31
  wire        unused_prod_top = prod_d[32];

  reg           s3_out_q;
  reg           s3_last_q;
  reg [N_W-1:0] s3_idx_q;
  reg [31:0]    prod_q;
  always @(posedge clk) begin
    if (rst) begin
      s3_out_q <= 1'b0;
    end else begin
      s3_out_q <= s2_ph_q == PH_OUT;
    end
    s3_last_q <= s2_last_q;
    s3_idx_q  <= s2_idx_q;
    prod_q    <= prod_d[31:0];
  end

  // Constants of the descriptor, registered (the ports are stable from start; the first OUT element reaches
  // stage 3 long after): the p shift, the label's 2^err_frac and the err_w saturation limits.
  wire signed [32:0] one = 33'sd1;
  reg [4:0]          p_rsh_q;
  reg signed [32:0]  label_one_q;
  reg signed [32:0]  lim_hi_q;
  reg signed [32:0]  lim_lo_q;
  always @(posedge clk) begin
    p_rsh_q     <= 5'd31 - err_frac[4:0];  // err_frac <= 31 (checked at start)
    label_one_q <= one <<< err_frac[4:0];
    lim_hi_q    <= (one <<< (err_w - 6'd1)) - one;
    lim_lo_q    <= -(one <<< (err_w - 6'd1));
  end

  // ---- stage 3: p = floor(E R / 2^(31 - err_frac)), and whether this is the label's element ----
  reg           s4_out_q;
  reg           s4_last_q;
  reg [N_W-1:0] s4_idx_q;
  reg [31:0]    p_q;
  reg           is_label_q;
  always @(posedge clk) begin
    if (rst) begin
      s4_out_q <= 1'b0;
    end else begin
      s4_out_q <= s3_out_q;
    end
    s4_last_q  <= s3_last_q;
    s4_idx_q   <= s3_idx_q;
    p_q        <= prod_q >> p_rsh_q;
    is_label_q <= s3_idx_q == label;
  end

  // ---- stage 4: the label's 2^err_frac off (its own stage: a 33-bit subtraction and the 33-bit compares in
  // one cycle are too long a path) ----
  reg               s5_out_q;
  reg               s5_last_q;
  reg [N_W-1:0]     s5_idx_q;
  reg signed [32:0] v_q;
  always @(posedge clk) begin
    if (rst) begin
      s5_out_q <= 1'b0;
    end else begin
      s5_out_q <= s4_out_q;
    end
    s5_last_q <= s4_last_q;
    s5_idx_q  <= s4_idx_q;
    v_q       <= $signed({1'b0, p_q}) - (is_label_q ? label_one_q : 33'sd0);
  end

  // ---- stage 5: saturate to err_w ----
  wire               hi = v_q > lim_hi_q;
  wire               lo = v_q < lim_lo_q;
  wire signed [32:0] y = hi ? lim_hi_q : (lo ? lim_lo_q : v_q);
  wire [32-OUT_W:0]  unused_y_top = y[32:OUT_W];  // equal to the sign: |y| < 2^(err_w - 1) <= 2^(OUT_W - 1)

  reg              wr_en_q;
  reg [ADDR_W-1:0] wr_addr_q;
  reg [OUT_W-1:0]  wr_data_q;
  reg [31:0]       sat_q;
  reg [31:0]       p_label_q;
  always @(posedge clk) begin
    if (rst) begin
      wr_en_q <= 1'b0;
      fin_q   <= 1'b0;
    end else begin
      wr_en_q <= s5_out_q;
      fin_q   <= s5_out_q && s5_last_q;
    end
    wr_addr_q <= e_base + {{(ADDR_W-N_W){1'b0}}, s5_idx_q};
    wr_data_q <= y[OUT_W-1:0];
  end

  // The saturation count a cycle behind the write (the compare is registered first), complete when done rises.
  reg sat_hit_q;
  always @(posedge clk) begin
    if (rst) begin
      sat_hit_q <= 1'b0;
    end else begin
      sat_hit_q <= s5_out_q && (hi || lo);
    end
  end
  always @(posedge clk) begin
    if (run) begin
      sat_q     <= 32'd0;
      p_label_q <= 32'd0;
    end else begin
      if (sat_hit_q) begin
        sat_q <= sat_q + 32'd1;  // at most 2^N_W - 1 per op: cannot wrap
      end
      if (s4_out_q && is_label_q) begin
        p_label_q <= p_q;
      end
    end
  end

  assign error      = err_q != ERR_NONE;
  assign error_code = err_q;
  assign sat_count  = sat_q;
  assign pred       = pred_q;
  assign p_label    = p_label_q;
  assign o_wr_en    = wr_en_q;
  assign o_wr_addr  = wr_addr_q;
  assign o_wr_data  = wr_data_q;

endmodule
`default_nettype wire
